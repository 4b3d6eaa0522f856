"""The competition API's own parsing (app/web/api/competition.py); its routes are exercised
on both databases by tests/web/test_challenge.py, test_rated_races.py and test_events.py."""

from __future__ import annotations

from datetime import date

import pytest

from app.services.errors import NotFound
from app.web.api.competition import QueueRequest, parse_day


def test_a_day_is_an_iso_date_or_none() -> None:
    assert parse_day("2026-11-27") == date(2026, 11, 27)
    assert parse_day(None) is None


@pytest.mark.parametrize("text", ["27.11.2026", "2026-02-30", "", "today"])
def test_anything_else_is_a_day_that_does_not_exist(text: str) -> None:
    with pytest.raises(NotFound) as refused:
        parse_day(text)
    assert refused.value.status == 404 and text in refused.value.message


def test_the_queue_request_takes_a_registered_game_only() -> None:
    assert QueueRequest.model_validate({"game": "corners"}).game == "corners"
    with pytest.raises(ValueError):
        QueueRequest.model_validate({"game": "klondike"})
