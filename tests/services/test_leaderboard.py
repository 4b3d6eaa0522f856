"""The leaderboard (app/services/leaderboard.py) as contract.md (v2) defines it, on SQLite and
PostgreSQL: ranking by the Wilson bound, the minimum of games, periods, and its cache (the
statistics' database and clock: tests/services/stats_env.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.db.models import (
    ALL_GAMES,
    DailyStats,
    Player,
    PlayerStats,
)
from app.services.history import History
from app.services.leaderboard import Leaderboards, Period, Ranked
from app.services.players import create_player
from app.services.stats import wilson_lower_bound
from tests.services.stats_env import (
    START,
    Env,
)
from tests.waiting import wait_until

# -- the leaderboard -------------------------------------------------------------------------------


def put_stats(
    env: Env, name: str, game: str, played: int, won: int, wilson: float | None = None
) -> str:
    with env.sessions.begin() as db:
        player = db.scalar(select(Player).where(Player.name == name))
        if player is None:
            player, _ = create_player(db, name)
        db.add(
            PlayerStats(
                player_id=player.id, game=game, played=played, won=won,
                wilson=wilson_lower_bound(won, played) if wilson is None else wilson,
                current_streak=0, longest_streak=0,
            )
        )  # fmt: skip
        return player.id


def ranks(board_rows: Sequence[Ranked]) -> list[tuple[int, str]]:
    return [(r.rank, r.player) for r in board_rows]


def test_ranking_by_wilson_bound_then_wins_with_shared_ranks(env: Env) -> None:
    put_stats(env, "Alice", ALL_GAMES, 10, 9)
    put_stats(env, "Bruno", ALL_GAMES, 10, 5)
    put_stats(env, "Carla", ALL_GAMES, 10, 5)
    put_stats(env, "Dmitri", ALL_GAMES, 10, 1)
    put_stats(env, "Eve", ALL_GAMES, 4, 4)  # a perfect record over too few games
    board = env.boards().board(None, Period.ALL)
    assert ranks(board.rows) == [(1, "Alice"), (2, "Bruno"), (2, "Carla"), (4, "Dmitri")]
    bruno = board.rows[1]
    assert (bruno.played, bruno.won, bruno.win_rate) == (10, 5, 0.5)
    assert round(bruno.wilson, 4) == 0.2366
    # A much better rate over few games ranks below a good rate over many.
    put_stats(env, "Frida", ALL_GAMES, 200, 150)  # 75% over 200: bound 0.686
    put_stats(env, "Gus", ALL_GAMES, 12, 9)  # 75% over 12: bound 0.468, below Alice's 0.596
    assert [r.player for r in env.boards().board(None, Period.ALL).rows][:3] == [
        "Frida",
        "Alice",
        "Gus",
    ]


def test_equal_bounds_are_ordered_by_wins(env: Env) -> None:
    # Equal bounds with different wins only happen at 0 (no wins) in real data; stored bounds
    # make the rule visible.
    put_stats(env, "Hana", "castles-end", 20, 6, wilson=0.25)
    put_stats(env, "Ivo", "castles-end", 10, 4, wilson=0.25)
    put_stats(env, "Jon", "castles-end", 30, 8, wilson=0.25)
    put_stats(env, "Kai", "castles-end", 10, 0)
    put_stats(env, "Lea", "castles-end", 25, 0)
    board = env.boards().board("castles-end", Period.ALL)
    assert ranks(board.rows) == [(1, "Jon"), (2, "Hana"), (3, "Ivo"), (4, "Kai"), (4, "Lea")]
    assert board.game == "castles-end"


def test_only_players_with_the_minimum_of_games_are_ranked(env: Env) -> None:
    put_stats(env, "Nine", ALL_GAMES, 9, 9)
    put_stats(env, "Ten", ALL_GAMES, 10, 0)
    assert [r.player for r in env.boards().board(None, Period.ALL).rows] == ["Ten"]
    assert [r.player for r in env.boards(min_games=3).board(None, Period.ALL).rows] == [
        "Nine",
        "Ten",
    ]
    assert env.boards(min_games=11).board(None, Period.ALL).rows == []
    assert env.boards(min_games=3).board(None, Period.ALL).min_games == 3


def put_day(env: Env, player_id: str, game: str, days_ago: int, played: int, won: int) -> None:
    with env.sessions.begin() as db:
        day = env.clock.today() - timedelta(days=days_ago)
        db.add(DailyStats(player_id=player_id, game=game, day=day, played=played, won=won))


def test_period_filters_count_the_games_first_played_in_the_period(env: Env) -> None:
    recent = put_stats(env, "Recent", ALL_GAMES, 29, 19)
    for days_ago, played, won in [(0, 3, 2), (6, 4, 1), (7, 5, 5), (29, 2, 0), (30, 15, 11)]:
        put_day(env, recent, ALL_GAMES, days_ago, played, won)
    old = put_stats(env, "Old", ALL_GAMES, 20, 20)
    put_day(env, old, ALL_GAMES, 40, 20, 20)
    boards = env.boards(min_games=5)

    def rows(period: Period) -> list[tuple[str, int, int]]:
        return [(r.player, r.played, r.won) for r in boards.board(None, period).rows]

    assert rows(Period.DAYS_7) == [("Recent", 7, 3)]  # today and 6 days ago
    assert rows(Period.DAYS_30) == [("Recent", 14, 8)]  # … and 7 and 29 days ago
    assert rows(Period.ALL) == [("Old", 20, 20), ("Recent", 29, 19)]
    board = boards.board(None, Period.DAYS_7)
    assert board.period is Period.DAYS_7
    assert board.rows[0].wilson == pytest.approx(wilson_lower_bound(3, 7))
    # The minimum applies to the games of the period.
    assert env.boards(min_games=8).board(None, Period.DAYS_7).rows == []


def test_periods_follow_the_day_of_the_deal(env: Env) -> None:
    me = env.player()
    env.clock.at = START - timedelta(days=10)
    env.lost(me, "patriarchs", 3)
    env.clock.at = START - timedelta(days=40)
    env.start(me, "patriarchs", 4)  # dealt 40 days ago, first move 38 days later
    env.clock.at = START - timedelta(days=2)
    env.first_move(me, History(env.sessions).in_progress(me)[0].id)
    env.clock.at = START
    env.lost(me, "patriarchs", 5)
    boards = env.boards(min_games=1)
    played = {p: boards.board("patriarchs", p).rows[0].played for p in Period}
    assert played == {Period.ALL: 3, Period.DAYS_30: 2, Period.DAYS_7: 1}
    totals = {p: boards.board(None, p).totals["patriarchs"].played for p in Period}
    assert totals == {Period.ALL: 3, Period.DAYS_30: 2, Period.DAYS_7: 1}


def test_recent_boards_are_cached_and_refreshed_in_the_background(env: Env) -> None:
    me = put_stats(env, "Cached", ALL_GAMES, 10, 5)
    put_day(env, me, ALL_GAMES, 1, 10, 5)
    boards = Leaderboards(env.sessions, 10, today=env.clock.today, cache_seconds=60)
    first = boards.board(None, Period.DAYS_7)
    assert [(r.player, r.played) for r in first.rows] == [("Cached", 10)]
    put_day(env, me, ALL_GAMES, 0, 2, 2)
    # Within the cache time the rows stay as they were; the per-game totals are always live.
    assert boards.board(None, Period.DAYS_7).rows == first.rows
    assert boards.board(None, Period.ALL).rows[0].played == 10  # all time: always live
    # Once stale, the next request still answers at once, and a refresh starts.
    for cached in boards._cache.values():
        cached.made -= 61
    assert boards.board(None, Period.DAYS_7).rows == first.rows
    wait_until(
        lambda: boards.board(None, Period.DAYS_7).rows[0].played == 12, "the background refresh"
    )
    rows = boards.board(None, Period.DAYS_7).rows
    assert [(r.player, r.played, r.won) for r in rows] == [("Cached", 12, 7)]
    # A new day is a new window, computed at once: six days on, only today's 2 games are in it.
    env.clock.at += timedelta(days=6)
    assert boards.board(None, Period.DAYS_7).rows == []
