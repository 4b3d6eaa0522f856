"""The statistics counters (app/db/models/stats.py): one row per player, game (or every game)
and day; counters that start at zero."""

from __future__ import annotations

from datetime import date

from sqlalchemy.orm import Session

from app.db.models import ALL_GAMES, DailyStats, DealStats, GameDailyStats, PlayerStats
from app.engine import GAMES
from tests.db.models.conftest import refused

DAY = date(2026, 11, 1)


def test_all_games_is_a_name_no_game_has() -> None:
    assert ALL_GAMES == "all" and ALL_GAMES not in GAMES


def test_a_players_record_starts_at_zero_for_each_game_and_for_all(session: Session) -> None:
    session.add_all([PlayerStats(player_id="p1", game=g) for g in ("corners", ALL_GAMES)])
    session.flush()
    record = session.get_one(PlayerStats, ("p1", ALL_GAMES))
    counters = (record.played, record.won, record.wilson, record.current_streak,
                record.longest_streak)  # fmt: skip
    assert counters == (0, 0, 0.0, 0, 0)
    assert (record.best_ms, record.fewest_moves, record.last_played_at) == (None, None, None)
    assert "UNIQUE" in refused(session, PlayerStats, player_id="p1", game="corners")


def test_daily_counts_are_one_row_per_player_game_and_day(session: Session) -> None:
    session.add(DailyStats(player_id="p1", game="corners", day=DAY))
    session.add(DailyStats(player_id="p1", game="corners", day=date(2026, 11, 2)))
    session.add(GameDailyStats(game="corners", day=DAY))
    session.flush()
    counted = session.get_one(DailyStats, ("p1", "corners", DAY))
    assert (counted.played, counted.won) == (0, 0)
    assert "UNIQUE" in refused(session, DailyStats, player_id="p1", game="corners", day=DAY)
    assert "UNIQUE" in refused(session, GameDailyStats, game="corners", day=DAY)


def test_a_deals_records_point_at_games_that_exist(session: Session) -> None:
    session.add(DealStats(game="corners", deal=7, fewest_moves=80, fewest_game_id="g1"))
    session.flush()
    stats = session.get_one(DealStats, ("corners", 7))
    assert (stats.played, stats.won, stats.fastest_ms, stats.fastest_game_id) == (0, 0, None, None)
    no_game = {"game": "corners", "deal": 8, "fastest_ms": 1, "fastest_game_id": "no-such-game"}
    assert "FOREIGN KEY" in refused(session, DealStats, **no_game)
