"""The race, room and event statuses: the strings the database stores and the API answers carry,
so every value must fit its column and be one the answer's schema allows, and nothing more."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Literal, get_args, get_origin

import pytest
from pydantic import BaseModel
from sqlalchemy import String

from app.db.models import Race, Room
from app.services.statuses import ArenaStatus, RaceStatus, RoomStatus
from app.web.api.schemas.competition import EventOut
from app.web.api.schemas.rooms import RaceOut, RoomAnswer


def allowed(model: type[BaseModel], field: str) -> set[str]:
    annotation = model.model_fields[field].annotation
    assert get_origin(annotation) is Literal
    return set(get_args(annotation))


@pytest.mark.parametrize(
    ("status", "model"),
    [(RaceStatus, RaceOut), (RoomStatus, RoomAnswer), (ArenaStatus, EventOut)],
)
def test_the_answers_allow_exactly_the_statuses_the_services_use(
    status: type[StrEnum], model: type[BaseModel]
) -> None:
    assert {s.value for s in status} == allowed(model, "status")


@pytest.mark.parametrize(("status", "table"), [(RaceStatus, Race), (RoomStatus, Room)])
def test_every_status_fits_its_column(status: type[StrEnum], table: type[object]) -> None:
    column = table.__table__.c.status  # type: ignore[attr-defined]
    assert isinstance(column.type, String)
    length = column.type.length
    assert length is not None
    assert max(len(s.value) for s in status) <= length


def test_a_status_is_its_string_in_comparisons_and_in_json() -> None:
    stored: str = "open"  # as read back from the database
    assert stored == RoomStatus.OPEN
    assert {"racing": 1}[RoomStatus.RACING] == 1  # the same key as its string
    assert RaceStatus("finished") is RaceStatus.FINISHED
    assert json.dumps({"status": ArenaStatus.SCHEDULED}) == '{"status": "scheduled"}'
    with pytest.raises(ValueError):
        RaceStatus("paused")
