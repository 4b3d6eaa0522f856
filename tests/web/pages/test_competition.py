"""The competition pages' own parsing (app/web/pages/competition.py); the pages themselves are
exercised on both databases by tests/web/test_challenge.py, test_rated_races.py, test_events.py
and test_sealed.py."""

from __future__ import annotations

from datetime import date

import pytest

from app.services.errors import InvalidRequest
from app.web.pages.competition import _day


def test_a_day_is_an_iso_date_and_an_empty_choice_is_today() -> None:
    assert _day("2026-11-27") == date(2026, 11, 27)
    assert _day("") is None and _day(None) is None


@pytest.mark.parametrize("text", ["27.11.2026", "2026-13-01", "yesterday"])
def test_anything_else_is_a_422(text: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        _day(text)
    assert refused.value.status == 422
