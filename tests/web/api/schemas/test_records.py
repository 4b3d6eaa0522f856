"""Leaderboards, player records and deals as the API writes them
(app/web/api/schemas/records.py), from the services' values without an app: renamed and
rounded fields, milliseconds as seconds, and the deal's verdict only for who may see it."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from app.engine import get_ruleset
from app.services.deals import DealSummary, FinishedGame
from app.services.leaderboard import (
    Board,
    CasualRecord,
    GameRecord,
    Period,
    PlayerRecord,
    Ranked,
    RecentGame,
    Totals,
)
from app.services.ratings import RatingOut
from app.services.same_deal import Relation
from app.services.seal import Seal, SealKind
from app.web.api.schemas.records import (
    GameRecordOut,
    LeaderboardAnswer,
    deal_answer,
    deal_json,
    leaderboard,
    player_answer,
)

WHEN = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_a_leaderboard_rounds_its_rates_and_says_its_period() -> None:
    board = Board(
        game=None,
        period=Period.DAYS_7,
        min_games=10,
        rows=[Ranked(1, "Ada", 3, 2, 0.123456789)],
        totals={"corners": Totals(3, 2), "patriarchs": Totals(0, 0)},
    )
    data = leaderboard(board).model_dump(mode="json")
    assert data["game"] is None and data["period"] == "7d" and data["min_games"] == 10
    assert data["rows"] == [
        {"rank": 1, "player": "Ada", "played": 3, "won": 2, "win_rate": 0.666667,
         "wilson_lower_bound": 0.123457},
    ]  # fmt: skip
    assert data["games"] == {
        "corners": {"played": 3, "won": 2, "win_rate": 2 / 3},
        "patriarchs": {"played": 0, "won": 0, "win_rate": None},  # nothing played: no rate
    }


def test_a_leaderboard_of_an_unknown_game_or_period_is_refused() -> None:
    fields = {"min_games": 10, "rows": [], "games": {}}
    with pytest.raises(ValidationError):
        LeaderboardAnswer.model_validate(fields | {"game": "klondike", "period": "all"})
    with pytest.raises(ValidationError):
        LeaderboardAnswer.model_validate(fields | {"game": None, "period": "1y"})


def test_a_player_record_says_seconds_and_iso_times() -> None:
    record = PlayerRecord(
        name="Ada",
        games=[GameRecord("corners", 4, 1, 61_500, 90, 0, 1),
               GameRecord("all", 4, 1, None, None, 0, 1)],
        recent=[
            RecentGame("g1", "corners", None, True, "playing", 5, None, None),
            RecentGame("g2", "corners", 12, False, "won", 90, 61_500, WHEN, "/games/g2/replay"),
        ],
        casual=[CasualRecord("corners", 1, 1)],
        race_ratings={"corners": RatingOut(rating=1.5, mu=25.0, sigma=7.8, races=2)},
    )  # fmt: skip
    data = player_answer(record).model_dump(mode="json")
    assert data["player"] == "Ada"
    corners, together = data["games"]
    assert (corners["best_seconds"], corners["win_rate"], corners["fewest_moves"]) == (
        61.5,
        0.25,
        90,
    )
    assert together["game"] == "all" and together["best_seconds"] is None
    sealed, won = data["recent"]
    assert (sealed["deal"], sealed["seconds"], sealed["started_at"], sealed["link"]) == (
        None, None, None, None,
    )  # fmt: skip
    assert (won["seconds"], won["started_at"], won["link"]) == (
        61.5,
        WHEN.isoformat(),
        "/games/g2/replay",
    )
    assert data["casual"] == [{"game": "corners", "played": 1, "won": 1}]
    assert data["race_ratings"] == {
        "corners": {"rating": 1.5, "mu": 25.0, "sigma": 7.8, "races": 2}
    }


def test_a_game_record_is_of_a_game_or_all() -> None:
    row = {"played": 0, "won": 0, "win_rate": None, "best_seconds": None, "fewest_moves": None,
           "current_streak": 0, "longest_streak": 0}  # fmt: skip
    assert GameRecordOut.model_validate(row | {"game": "all"}).game == "all"
    with pytest.raises(ValidationError):
        GameRecordOut.model_validate(row | {"game": "every"})


def summary(**changes: Any) -> DealSummary:
    won = FinishedGame("g1", "Ada", "won", 80, 95_000, WHEN)
    lost = FinishedGame("g2", "Bo", "lost", 30, None, None, replayable=False)
    fields: dict[str, Any] = {
        "rules": get_ruleset("corners"), "number": 12, "played": 3, "won": 1,
        "fewest_moves": won, "fastest": won, "finished": [won, lost],
    }  # fmt: skip
    return DealSummary(**(fields | changes))


def test_a_deal_lists_its_finished_games_with_their_replays() -> None:
    data = deal_answer(summary()).model_dump(mode="json")
    assert (data["game"], data["deal"], data["win_rate"]) == ("corners", 12, 1 / 3)
    assert data["fastest"] == {
        "id": "g1", "player": "Ada", "status": "won", "moves": 80, "seconds": 95.0,
        "finished_at": WHEN.isoformat(), "replay": "/games/g1/replay",
    }  # fmt: skip
    assert data["finished"][1]["replay"] is None  # not the caller's to open
    assert data["daily"] is None and data["daily_results"] is None and data["sealed"] is None


def test_the_deals_verdict_is_sent_only_to_who_has_finished_it() -> None:
    """The verdict is a spoiler (the same-deal rule): its keys are left out, not null."""
    verdict = {"winnable": True, "solution": ["r1-f1"]}
    for relation in (Relation.NONE, Relation.IN_PLAY):
        sent = deal_json(summary(viewer=relation, viewer_game="g9", **verdict))
        assert "winnable" not in sent and "solution" not in sent
        assert "sealed" not in sent
    finished = deal_json(summary(viewer=Relation.FINISHED, **verdict))
    assert (finished["winnable"], finished["solution"]) == (True, ["r1-f1"])
    assert finished["replays_open"] is True and finished["your_game"] is None


def test_a_sealed_deal_says_why_and_when_it_opens_and_keeps_its_verdict() -> None:
    daily = Seal(SealKind.DAILY, WHEN)
    sent = deal_json(
        summary(viewer=Relation.FINISHED, sealed=daily, daily=date(2026, 5, 6), winnable=True)
    )
    assert sent["sealed"] == {
        "kind": "daily",
        "opens_at": WHEN.isoformat(),
        "message": daily.message,
    }
    assert sent["daily"] == "2026-05-06" and sent["replays_open"] is False
    assert "winnable" not in sent
    rated = deal_json(summary(sealed=Seal(SealKind.RATED, None)))
    assert rated["sealed"]["kind"] == "rated" and rated["sealed"]["opens_at"] is None
