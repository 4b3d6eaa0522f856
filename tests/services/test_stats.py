"""Statistics as contract.md (v2) defines them, on SQLite and PostgreSQL.

What counts as played (a rated game, from the moment it is dealt, for ever) and won, casual
games apart, resignations and abandoned games, what each game records, streaks, the Wilson
bound, the leaderboard's ranking, minimum and periods, the overall win rate of each game, and the
recount of migration 0004 (the leaderboard: test_leaderboard.py; a deal's record: test_deals.py).

These tests use a database of their own per backend (emptied before each test, so ranks and
totals are exact), play through the real services with real legal moves (a won Corners game is
found by a small search with the engine), and run on a clock the test controls.
"""

from __future__ import annotations

import hashlib
import math
from datetime import date, timedelta
from statistics import NormalDist

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select

from app.db.models import (
    ALL_GAMES,
    Base,
    DailyStats,
    DealStats,
    GameDailyStats,
    PlayerStats,
)
from app.db.session import make_engine
from app.engine import DEVELOPMENT_KEY, MAX_DEAL, Move
from app.services.games import Games
from app.services.leaderboard import Period, player_record
from app.services.stats import wilson_lower_bound
from tests.databases import downgrade, migrate
from tests.services.stats_env import (
    WIN_DEAL,
    WIN_DEAL_2,
    WIN_GAME,
    Env,
    as_utc,
    winning_line,
)

# -- the Wilson bound -----------------------------------------------------------------------------


def wilson_by_hand(won: int, played: int) -> float:
    """The textbook formula, written out independently of the app's."""
    z = NormalDist().inv_cdf(0.975)
    p = won / played
    return (
        p + z * z / (2 * played) - z * math.sqrt(p * (1 - p) / played + z * z / (4 * played**2))
    ) / (1 + z * z / played)


# Lower bounds of the 95% Wilson score interval, as published (e.g. Wikipedia's worked examples,
# and any statistics package's ``proportion_confint(method="wilson")``), to 4 decimals.
KNOWN = [(0, 10, 0.0), (5, 10, 0.2366), (10, 10, 0.7225), (1, 1, 0.2065), (81, 100, 0.7222),
         (1, 2, 0.0945), (0, 1, 0.0), (50, 100, 0.4038)]  # fmt: skip


@pytest.mark.parametrize(("won", "played", "expected"), KNOWN)
def test_wilson_lower_bound_matches_known_values(won: int, played: int, expected: float) -> None:
    assert round(wilson_lower_bound(won, played), 4) == expected
    assert round(wilson_by_hand(won, played), 4) == expected


def test_wilson_of_nothing_played_is_zero() -> None:
    assert wilson_lower_bound(0, 0) == 0.0


# -- played, won, and what a game records ----------------------------------------------------------


def test_a_rated_game_counts_as_played_from_the_deal(env: Env) -> None:
    me = env.player()
    game_id = env.start(me)  # dealt, no move yet: the player has seen the layout
    for key in ("quadrangle", ALL_GAMES):
        row = env.stats(me, key)
        assert row is not None and (row.played, row.won) == (1, 0)
    assert env.boards().board(None, Period.ALL).totals["quadrangle"].played == 1
    assert env.deals().summary("quadrangle", 1).played == 0  # unfinished

    env.play(me, game_id, [Move.parse("t5-t9")])  # reveals nothing: it can be undone
    env.games.undo(game_id, me)  # neither the move nor the undo changes what was counted
    row = env.stats(me, "quadrangle")
    assert row is not None and row.played == 1
    record = env.record(game_id)
    assert (record.moves, record.undos, record.status, record.rated) == (1, 1, "playing", True)
    assert env.boards().board(None, Period.ALL).totals["quadrangle"].played == 1


def test_a_casual_game_never_counts_toward_the_record(env: Env) -> None:
    me = env.player()
    won = env.win(me, rated=False)
    lost = env.lost(me, "patriarchs", 3, rated=False)
    assert not env.record(won).rated and not env.record(lost).rated
    assert env.stats(me, WIN_GAME) is None and env.stats(me, ALL_GAMES) is None
    board = env.boards(min_games=1).board(None, Period.ALL)
    assert board.rows == [] and board.totals[WIN_GAME].played == 0
    record = player_record(env.sessions, env.name(me))
    assert all(g.played == 0 for g in record.games)
    assert [(c.game, c.played, c.won) for c in record.casual] == [
        (WIN_GAME, 1, 1),
        ("patriarchs", 1, 0),
    ]
    assert {r.id: r.rated for r in record.recent} == {won: False, lost: False}
    # A casual game still feeds the deal's own record: the player's first finish of it.
    summary = env.deals().summary(WIN_GAME, WIN_DEAL)
    assert (summary.played, summary.won) == (1, 1)


def test_resigning_a_rated_game_before_any_move_is_a_played_lost_game(env: Env) -> None:
    # The peek: deal a rated game, resign at once, and the finished game shows every card. It
    # costs a played, lost game, and a later game of that deal can only be casual.
    me = env.player()
    game_id = env.start(me, WIN_GAME, WIN_DEAL)
    env.games.resign(game_id, me)
    row = env.stats(me, WIN_GAME)
    assert row is not None and (row.played, row.won) == (1, 0)
    assert env.record(game_id).duration_ms is None
    deals = env.deals()
    assert [g.id for g in deals.summary(WIN_GAME, WIN_DEAL, me).finished] == [game_id]
    again = env.win(me, rated=False)  # knowing every card: casual, and not the first finish
    assert not env.record(again).rated
    row = env.stats(me, WIN_GAME)
    assert row is not None and (row.played, row.won) == (1, 0)
    summary = deals.summary(WIN_GAME, WIN_DEAL, me)
    assert (summary.played, summary.won, summary.fewest_moves) == (1, 0, None)
    assert [g.id for g in summary.finished] == [game_id]


def test_resigned_and_abandoned_games_are_played_and_not_won(env: Env) -> None:
    me = env.player()
    resigned = env.lost(me)
    abandoned = env.played(me, "quadrangle", 2)
    assert env.record(resigned).status == "lost"
    assert env.record(abandoned).status == "playing"
    for key in ("quadrangle", ALL_GAMES):
        row = env.stats(me, key)
        assert row is not None
        assert (row.played, row.won, row.wilson) == (2, 0, 0.0)
        assert (row.best_ms, row.fewest_moves) == (None, None)
    record = player_record(env.sessions, env.name(me))
    quadrangle = next(g for g in record.games if g.game == "quadrangle")
    assert (quadrangle.played, quadrangle.won, quadrangle.win_rate) == (2, 0, 0.0)
    assert {r.id for r in record.recent} == {resigned, abandoned}


def test_a_game_records_moves_undos_and_its_active_time(env: Env) -> None:
    """The time of a game is its active time: from the first move, each pause between two
    actions counts, up to the idle cap (two minutes by default)."""
    me = env.player()
    game_id = env.start(me)
    env.clock.at += timedelta(hours=1)  # looking at the deal before the first move: not counted
    env.play(me, game_id, [Move.parse("t5-t9")])
    first = env.record(game_id).first_move_at
    assert env.record(game_id).active_ms == 0
    env.games.undo(game_id, me)  # each reading of the test clock is 1 s after the previous one
    env.play(me, game_id, [Move.parse("t5-t9")])
    env.games.undo(game_id, me)
    env.first_move(me, game_id)
    assert env.record(game_id).active_ms == 4_000
    env.clock.at += timedelta(minutes=3)  # a 181 s pause counts as the cap, 120 s
    env.games.resign(game_id, me)
    record = env.record(game_id)
    assert (record.moves, record.undos, record.status) == (3, 2, "lost")
    assert record.first_move_at == first  # the first move is the one that started the clock
    assert record.finished_at is not None and first is not None
    assert record.active_ms == record.duration_ms == 124_000
    assert as_utc(record.finished_at) - as_utc(first) > timedelta(minutes=3)


def test_the_idle_cap_is_a_setting(env: Env) -> None:
    games = Games(
        env.sessions,
        DEVELOPMENT_KEY,
        idle_cap_ms=10_000,
        store=env.games.store,
        stamps=env.clock,
        sealer=env.games.sealer,
    )
    me = env.player()
    game_id = games.start(me, "quadrangle", 1).record.id
    games.move(game_id, me, Move.parse("t5-t9"), 0)
    env.clock.at += timedelta(minutes=5)
    games.undo(game_id, me)
    assert env.record(game_id).active_ms == 10_000


def test_a_won_game_counts_as_won_with_its_time_and_moves(env: Env) -> None:
    me = env.player()
    game_id = env.win(me)
    record = env.record(game_id)
    line = winning_line()
    assert (record.status, record.moves, record.undos) == ("won", len(line), 0)
    assert record.duration_ms is not None and record.duration_ms > 0
    for key in (WIN_GAME, ALL_GAMES):
        row = env.stats(me, key)
        assert row is not None
        assert (row.played, row.won) == (1, 1)
        assert row.wilson == pytest.approx(wilson_lower_bound(1, 1))
        assert (row.best_ms, row.fewest_moves) == (record.duration_ms, len(line))
        assert (row.current_streak, row.longest_streak) == (1, 1)

    env.lost(me, WIN_GAME, WIN_DEAL)
    totals = env.boards().board(None, Period.ALL).totals
    assert (totals[WIN_GAME].played, totals[WIN_GAME].won, totals[WIN_GAME].win_rate) == (2, 1, 0.5)
    assert totals["patriarchs"].played == 0 and totals["patriarchs"].win_rate is None


# -- streaks ---------------------------------------------------------------------------------------


def streaks(env: Env, player_id: str, key: str) -> tuple[int, int]:
    row = env.stats(player_id, key)
    assert row is not None
    return row.current_streak, row.longest_streak


def test_win_win_loss_ends_the_streak_and_keeps_the_longest(env: Env) -> None:
    me = env.player()
    env.win(me)
    env.win(me)
    assert streaks(env, me, WIN_GAME) == (2, 2)
    env.lost(me, WIN_GAME, 3)
    assert streaks(env, me, WIN_GAME) == (0, 2)
    assert streaks(env, me, ALL_GAMES) == (0, 2)


def test_starting_a_game_while_the_previous_one_is_unfinished_ends_the_streak(env: Env) -> None:
    me = env.player()
    env.win(me)
    assert streaks(env, me, WIN_GAME) == (1, 1)
    # A game of another kind left unfinished: the all-games streak ends when the next game
    # starts; the Corners streak does not (the previous Corners game was finished).
    env.played(me, "patriarchs", 5)
    env.win(me)
    assert streaks(env, me, WIN_GAME) == (2, 2)
    assert streaks(env, me, ALL_GAMES) == (1, 1)
    # A Corners game left unfinished ends the Corners streak as soon as the next one starts.
    env.played(me, WIN_GAME, 7)
    assert streaks(env, me, WIN_GAME) == (2, 2)
    env.played(me, WIN_GAME, 8)
    assert streaks(env, me, WIN_GAME) == (0, 2)
    assert streaks(env, me, ALL_GAMES) == (0, 1)
    # Each abandoned game ends a streak once, not every streak after it: two Corners games are
    # still unfinished, yet a new game after a win keeps the streak.
    env.win(me)
    env.played(me, WIN_GAME, 9)
    assert streaks(env, me, WIN_GAME) == (1, 2)
    # A rated game counts from the deal: starting one while the last is unfinished ends the
    # streak even before a move.
    env.start(me, WIN_GAME, 10)
    assert streaks(env, me, WIN_GAME) == (0, 2)


def test_casual_games_leave_streaks_alone(env: Env) -> None:
    me = env.player()
    env.win(me)
    env.lost(me, WIN_GAME, 3, rated=False)
    env.played(me, WIN_GAME, 4, rated=False)
    env.start(me, WIN_GAME, 5, rated=False)
    assert streaks(env, me, WIN_GAME) == (1, 1)
    env.win(me, deal=WIN_DEAL_2)
    assert streaks(env, me, WIN_GAME) == (2, 2)


# -- the schema: models and migrations agree, and 0004 recounts the counters from the games --------


def test_the_models_and_the_migrations_agree(env: Env) -> None:
    engine = make_engine(env.url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


Rows = dict[str, list[tuple[object, ...]]]


def counters(env: Env) -> Rows:
    """Every counter table, in a fixed order."""
    tables = {
        "player": (PlayerStats.player_id, PlayerStats.game, PlayerStats.played, PlayerStats.won,
                   PlayerStats.wilson, PlayerStats.best_ms, PlayerStats.fewest_moves,
                   PlayerStats.current_streak, PlayerStats.longest_streak),
        "daily": (DailyStats.player_id, DailyStats.game, DailyStats.day, DailyStats.played,
                  DailyStats.won),
        "game_daily": (GameDailyStats.game, GameDailyStats.day, GameDailyStats.played,
                       GameDailyStats.won),
        "deal": (DealStats.game, DealStats.deal, DealStats.played, DealStats.won,
                 DealStats.fewest_moves, DealStats.fewest_game_id, DealStats.fastest_ms,
                 DealStats.fastest_game_id),
    }  # fmt: skip
    out: Rows = {}
    with env.sessions() as db:
        for name, columns in tables.items():
            rows = db.execute(select(*columns).order_by(*columns[:3])).all()
            out[name] = [tuple(round(v, 9) if isinstance(v, float) else v for v in r) for r in rows]
    return out


def v1_daily_deal(slug: str, day: date) -> int:
    """The deal of the day as v1 computed it (an unkeyed hash of the date)."""
    digest = hashlib.sha256(f"daily|{slug}|{day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MAX_DEAL + 1


@pytest.mark.slow
def test_migration_0004_recounts_the_counters_up_and_down(env: Env) -> None:
    ann, bob = env.player(), env.player()
    ann_won = env.win(ann)  # rated: the first game of a drawn number
    env.clock.step = timedelta(milliseconds=300)
    bob_link = env.win(bob, extra_undo=True, rated=False)  # casual: a link to Ann's deal
    env.clock.step = timedelta(seconds=1)
    bob_lost = env.lost(bob, WIN_GAME, WIN_DEAL_2)  # rated
    env.clock.at += timedelta(days=3)
    ann_typed = env.played(ann, "patriarchs", 12, rated=False)  # casual: a typed number
    bob_dealt = env.start(bob, "patriarchs", 5_000_000_000_000)  # rated, dealt, never played
    daily = v1_daily_deal("castles-end", env.clock.today())
    ann_daily = env.lost(ann, "castles-end", daily, rated=False)  # casual: v1's deal of the day
    live = counters(env)
    assert live["player"] and live["daily"] and live["game_daily"] and live["deal"]
    env.sessions.kw["bind"].dispose()  # let the migration take its locks

    downgrade(env.url, "0003")  # down: every game counts from its first move, as v1 did
    v1 = counters(env)
    assert v1 != live
    played = {(r[0], r[1]): r[2] for r in v1["player"]}
    assert played[(ann, "patriarchs")] == 1  # a casual game played: v1 counts it
    assert (bob, "patriarchs") not in played  # dealt, never moved: v1 does not
    assert played[(bob, WIN_GAME)] == 2 and played[(ann, ALL_GAMES)] == 3
    deal_rows = {(r[0], r[1]): r[2:4] for r in v1["deal"]}
    assert deal_rows[(WIN_GAME, WIN_DEAL)] == (2, 2)

    migrate(env.url, "head")  # up again: rated games told from casual ones, then recounted
    recounted = counters(env)
    for table, rows in live.items():
        assert recounted[table] == rows, table
    rated = {gid: env.record(gid).rated for gid in
             (ann_won, bob_link, bob_lost, ann_typed, bob_dealt, ann_daily)}  # fmt: skip
    assert rated == {ann_won: True, bob_link: False, bob_lost: True, ann_typed: False,
                     bob_dealt: True, ann_daily: False}  # fmt: skip
