"""The competition's answers as the API writes them (app/web/api/schemas/competition.py): the
daily challenge's days and standings, the race queue and board, events and their standings."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, date, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from app.services.arena_standings import ArenaStanding
from app.services.arenas import ArenaView
from app.services.challenge import ChallengeStatus, StandingRow, Standings
from app.services.race_queue import QueueState
from app.services.ratings import RatingRow
from app.services.rooms.views import RoomView
from app.services.statuses import ArenaStatus
from app.web.api.schemas.competition import (
    ChallengeOut,
    DailyAnswer,
    EventOut,
    challenge_out,
    challenge_standings,
    event_out,
    event_standings_answer,
    queue_answer,
    race_board_answer,
)

DAY = date(2026, 5, 6)
JOINED = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_a_challenge_day_runs_from_midnight_to_midnight_utc() -> None:
    data = challenge_out(ChallengeStatus(DAY, None, 3))
    assert data == {
        "date": "2026-05-06", "starts_at": "2026-05-06T00:00:00+00:00",
        "ends_at": "2026-05-07T00:00:00+00:00", "your_game": None, "streak": 3,
    }  # fmt: skip
    assert ChallengeOut.model_validate(data).streak == 3


def test_the_daily_answer_is_keyed_by_the_five_games() -> None:
    today = challenge_out(ChallengeStatus(DAY, "g1", 0))
    answer = DailyAnswer.model_validate(
        {"date": "2026-05-06", "deals": {"corners": 12}, "challenge": {"corners": today}}
    )
    assert answer.challenge["corners"].your_game == "g1"
    with pytest.raises(ValidationError):
        DailyAnswer.model_validate(
            {"date": "2026-05-06", "deals": {"klondike": 1}, "challenge": {}}
        )


def test_challenge_standings_rename_the_services_fields() -> None:
    rows = [
        StandingRow(1, "Ada", "won", 90, 80, 10, 61_000, "g1"),
        StandingRow(None, "Bo", "playing", 4, 80, None, 3_000, None),
    ]
    data = challenge_standings(Standings("corners", DAY, True, rows)).model_dump(mode="json")
    assert (data["game"], data["date"], data["final"]) == ("corners", "2026-05-06", True)
    assert data["ends_at"] == "2026-05-07T00:00:00+00:00"
    assert data["standings"][0] == {
        "rank": 1, "player": "Ada", "status": "won", "moves": 90, "par": 80, "over_par": 10,
        "active_ms": 61_000, "game": "g1",
    }  # fmt: skip
    assert data["standings"][1]["rank"] is None and data["standings"][1]["game"] is None


def test_a_challenge_standing_of_an_unknown_status_is_refused() -> None:
    row = StandingRow(None, "Bo", "abandoned", 4, 80, None, 3_000, None)
    with pytest.raises(ValidationError):
        challenge_standings(Standings("corners", DAY, False, [row]))


def test_the_race_board() -> None:
    answer = race_board_answer("patriarchs", [RatingRow(1, "Ada", 3.5, 27.1, 7.9, 4)])
    assert answer.model_dump() == {
        "game": "patriarchs", "board": "races",
        "rows": [{"rank": 1, "player": "Ada", "rating": 3.5, "mu": 27.1, "sigma": 7.9, "races": 4}],
    }  # fmt: skip
    with pytest.raises(ValidationError):
        race_board_answer("all", [])  # a race board is of one game


def test_the_queue_says_whether_the_caller_waits_and_the_race_formed() -> None:
    idle = queue_answer(QueueState(False, None, None, 0, None))
    assert idle.model_dump() == {
        "queued": False, "game": None, "joined_at": None, "waiting": 0, "room": None,
    }  # fmt: skip
    waiting = queue_answer(QueueState(True, "corners", JOINED, 2, None))
    assert waiting.joined_at == JOINED.isoformat() and waiting.waiting == 2
    room = RoomView("ABCDEF", "corners", "racing", "p1", [{"id": "p1", "name": "Ada"}], None)
    formed = queue_answer(QueueState(False, "corners", None, 0, room))
    assert formed.room is not None and formed.room.url == "/rooms/ABCDEF"


def arena(status: ArenaStatus = ArenaStatus.RUNNING) -> ArenaView:
    return ArenaView(7, "castles-end", JOINED, JOINED.replace(hour=9), status, 3)


def test_an_event_and_its_standings() -> None:
    data = event_out(arena())
    assert data == {
        "id": 7, "game": "castles-end", "starts_at": JOINED.isoformat(),
        "ends_at": "2026-05-06T09:08:09+00:00", "status": "running", "players": 3,
    }  # fmt: skip
    row = ArenaStanding(1, "Ada", 5, 2, 3, 90_000, 2)
    answer = event_standings_answer(arena(ArenaStatus.FINISHED), [row])
    assert answer.event.status == "finished"
    assert answer.model_dump()["standings"] == [asdict(row)]


@pytest.mark.parametrize("change", [{"status": "cancelled"}, {"game": "all"}, {"extra": True}])
def test_an_event_outside_the_contract_is_refused(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EventOut.model_validate(event_out(arena()) | change)
