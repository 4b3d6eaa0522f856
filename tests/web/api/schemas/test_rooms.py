"""Rooms and their races as the API writes them (app/web/api/schemas/rooms.py): a room's
shared link, its race as its events carry it, and the statuses the contract knows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from app.services.rooms.events import RaceView, Standing
from app.services.rooms.views import RoomView
from app.services.statuses import RaceStatus
from app.web.api.schemas.rooms import RaceOut, RoomAnswer, room_answer

STARTS = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
PLAYERS = [{"id": "p1", "name": "Ada"}, {"id": "p2", "name": "Bo"}]


def race(**changes: Any) -> RaceView:
    fields: dict[str, Any] = {
        "number": 2, "game": "corners", "deal": None, "starts_at": STARTS,
        "status": RaceStatus.RUNNING, "finished_at": None, "games": {"Ada": "g1", "Bo": "g2"},
        "standings": [Standing(1, "Ada", "g1", "won", 80, 52, 61_000),
                      Standing(2, "Bo", "g2", "playing", 12, 3, None)],
        "rated": False,
    }  # fmt: skip
    return RaceView(**(fields | changes))


def test_a_room_without_a_race() -> None:
    room = RoomView("ABCDEF", "corners", "open", "p1", PLAYERS, None)
    data = room_answer(room).model_dump(mode="json")
    assert data == {
        "code": "ABCDEF", "url": "/rooms/ABCDEF", "game": "corners", "status": "open",
        "players": PLAYERS, "race": None,
    }  # fmt: skip


def test_a_rooms_race_is_as_its_events_carry_it() -> None:
    view = race()
    data = room_answer(RoomView("ABCDEF", "corners", "racing", "p1", PLAYERS, view))
    sent = data.model_dump(mode="json")["race"]
    assert sent == view.event_data()  # the API and the events say a race the same way
    assert sent["deal"] is None and sent["starts_at"] == STARTS.isoformat()
    assert [s["place"] for s in sent["standings"]] == [1, 2]
    assert sent["standings"][1]["time_ms"] is None  # no time until a win


def test_a_finished_race_shows_its_deal() -> None:
    ended = race(status=RaceStatus.FINISHED, deal=424242, finished_at=STARTS, rated=True)
    sent = room_answer(RoomView("ABCDEF", "corners", "open", "p1", PLAYERS, ended))
    assert sent.race is not None
    assert (sent.race.deal, sent.race.status, sent.race.rated) == (424242, "finished", True)


def test_a_race_is_casual_unless_it_says_rated() -> None:
    data = race().event_data()
    del data["rated"]
    assert RaceOut.model_validate(data).rated is False


@pytest.mark.parametrize(
    "change",
    [{"status": "paused"}, {"game": "klondike"}, {"players": [{"id": "p1"}]}, {"extra": 1}],
)
def test_a_room_outside_the_contract_is_refused(change: dict[str, Any]) -> None:
    data = room_answer(RoomView("ABCDEF", "corners", "open", "p1", PLAYERS, None)).model_dump()
    with pytest.raises(ValidationError):
        RoomAnswer.model_validate(data | change)


def test_a_standing_outside_the_contract_is_refused() -> None:
    data = race().event_data()
    data["standings"][0]["status"] = "resigned"
    with pytest.raises(ValidationError):
        RaceOut.model_validate(data)
