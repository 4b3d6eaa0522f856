"""The pieces every API answer shares (app/web/api/schemas/base.py): whole numbers as JSON
Schema means them, the refusals each route documents, and answers sent as ready bytes."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from app.engine import GAMES
from app.web.api.schemas.base import (
    COMMON,
    PILE_ID,
    ErrorAnswer,
    GameSlug,
    PlayerRef,
    WholeNumber,
    answer,
    errors_of,
    iso_or_none,
    seconds_or_none,
    whole_between,
)

WHOLE: TypeAdapter[int] = TypeAdapter(WholeNumber)


@pytest.mark.parametrize(("sent", "read"), [(651, 651), (651.0, 651), (-2, -2), (0.0, 0)])
def test_whole_numbers_are_integers_and_integral_floats(sent: Any, read: int) -> None:
    assert WHOLE.validate_python(sent) == read
    assert type(WHOLE.validate_python(sent)) is int


@pytest.mark.parametrize("sent", [651.5, "651", True, None, [1]])
def test_anything_else_is_not_a_whole_number(sent: Any) -> None:
    with pytest.raises(ValidationError, match="Input should be a whole number"):
        WHOLE.validate_python(sent)


def test_bounded_whole_numbers_say_their_bounds_in_plain_json_schema() -> None:
    deal: TypeAdapter[int] = TypeAdapter(whole_between(1, 1000))
    assert deal.validate_python(1000.0) == 1000
    with pytest.raises(ValidationError):
        deal.validate_python(0)
    assert deal.json_schema() == {"type": "integer", "minimum": 1, "maximum": 1000}


def test_the_game_slugs_are_the_registered_games() -> None:
    slugs: TypeAdapter[str] = TypeAdapter(GameSlug)
    for slug in GAMES:
        assert slugs.validate_python(slug) == slug
    with pytest.raises(ValidationError):
        slugs.validate_python("klondike")


@pytest.mark.parametrize(
    ("pile", "valid"),
    [("stock", True), ("waste", True), ("t1", True), ("f12", True), ("r9", True),
     ("t0", False), ("t123", False), ("x1", False), ("t1\n", False), ("", False)],
)  # fmt: skip
def test_pile_ids(pile: str, valid: bool) -> None:
    assert (re.fullmatch(PILE_ID.strip("^$"), pile) is not None) == valid


def test_each_route_documents_its_refusals_and_the_common_ones() -> None:
    documented = errors_of(404, 401)
    assert list(documented) == sorted({401, 404, *COMMON})
    assert all(entry["model"] is ErrorAnswer for entry in documented.values())
    assert "`not_found`" in documented[404]["description"]


def test_answers_have_exactly_their_fields() -> None:
    with pytest.raises(ValidationError):
        PlayerRef.model_validate({"id": "p", "name": "n", "token": "secret"})


def test_an_answer_is_its_models_json_by_alias() -> None:
    class Moved(BaseModel):
        from_: str

        model_config = {"populate_by_name": True, "alias_generator": lambda n: n.rstrip("_")}

    response = answer(Moved(from_="t1"), 201)
    assert response.status_code == 201 and response.media_type == "application/json"
    assert json.loads(bytes(response.body)) == {"from": "t1"}


def test_optional_times() -> None:
    assert iso_or_none(None) is None
    assert iso_or_none(datetime(2026, 1, 2, 3, 4, tzinfo=UTC)) == "2026-01-02T03:04:00+00:00"
    assert seconds_or_none(None) is None and seconds_or_none(1500) == 1.5
