"""Statistics as contract.md (v2) defines them, on SQLite and PostgreSQL.

What counts as played (a rated game, from the moment it is dealt, for ever) and won, casual
games apart, resignations and abandoned games, what each game records, streaks, the Wilson
bound, the leaderboard's ranking, minimum and periods, the overall win rate of each game, the
record of a deal (each player's first finished game of it), and the recount of migration 0004.

These tests use a database of their own per backend (emptied before each test, so ranks and
totals are exact), play through the real services with real legal moves (a won Corners game is
found by a small search with the engine), and run on a clock the test controls.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import MoveStore
from app.db.models import (
    ALL_GAMES,
    Base,
    DailyStats,
    DealStats,
    Game,
    GameDailyStats,
    MoveRecord,
    Player,
    PlayerStats,
)
from app.db.session import make_engine, make_sessionmaker
from app.engine import DEVELOPMENT_KEY, MAX_DEAL, Move, Ruleset, State, get_ruleset
from app.services import daily as daily_module
from app.services import games as games_module
from app.services.deals import Deals
from app.services.games import Games
from app.services.history import History
from app.services.leaderboard import Leaderboards, Period, Ranked, player_record
from app.services.players import create_player
from app.services.stats import wilson_lower_bound
from app.web.schemas import deal_json
from tests.databases import downgrade, fresh_postgres_database, migrate, sqlite_url
from tests.waiting import wait_until

# Corners deals that can be won: the small search below finds a winning line for each. Their
# numbers are above 2^32, like the numbers the server draws (migration 0004 tells drawn deals
# from chosen ones by that).
WIN_GAME, WIN_DEAL, WIN_DEAL_2 = "corners", 4_294_967_297, 4_294_967_307
START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


# -- a winning line, found with the engine --------------------------------------------------------


def solve(rules: Ruleset, start: State, limit: int = 5000) -> list[Move] | None:
    """Depth-first search for a won position, foundation moves first; None past ``limit``."""
    seen: set[State] = set()
    path: list[Move] = []
    nodes = 0

    def search(state: State) -> bool:
        nonlocal nodes
        nodes += 1
        if rules.is_won(state):
            return True
        if nodes > limit or state in seen:
            return False
        seen.add(state)
        moves = sorted(
            rules.legal_moves(state),
            key=lambda m: (not m.target.startswith("f"), "stock" in (m.source, m.target)),
        )
        for move in moves:
            path.append(move)
            if search(rules.apply(state, move)):
                return True
            path.pop()
        return False

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        return path if search(start) else None
    finally:
        sys.setrecursionlimit(old)


@lru_cache
def winning_line(
    slug: str = WIN_GAME, deal: int = WIN_DEAL, key: bytes = DEVELOPMENT_KEY
) -> tuple[Move, ...]:
    rules = get_ruleset(slug)
    line = solve(rules, rules.deal(deal, key))
    assert line is not None, f"no winning line found for {slug} deal {deal}"
    assert rules.is_won(rules.replay(rules.deal(deal, key), line))
    return tuple(line)


def undoable_index(line: tuple[Move, ...], slug: str = WIN_GAME, deal: int = WIN_DEAL) -> int:
    """The index of the first move of the line that reveals nothing (so it can be undone)."""
    rules = get_ruleset(slug)
    state = rules.deal(deal, DEVELOPMENT_KEY)
    for i, move in enumerate(line):
        step = rules.step(state, move)
        if not step.revealed:
            return i
        state = step.after
    raise AssertionError("every move of the line reveals a card")


# -- a database of our own, a clock, and playing ---------------------------------------------------


@dataclass
class Drawn:
    """Stands in for the server's random draw of a deal number."""

    number: int

    def randint(self, low: int, high: int) -> int:
        assert low <= self.number <= high
        return self.number


@dataclass
class Clock:
    """Stands in for the services' clock: each reading is ``step`` after the previous one."""

    at: datetime = START
    step: timedelta = timedelta(seconds=1)

    def __call__(self) -> datetime:
        self.at += self.step
        return self.at

    def today(self) -> date:
        return self.at.date()


def stats_database(backend: str, directory: Path, name: str) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if backend == "postgres":
        url = fresh_postgres_database(f"{name}_{worker}")
    else:
        url = sqlite_url(directory, name)
    migrate(url)
    return url


TABLES = (MoveRecord, DealStats, GameDailyStats, DailyStats, PlayerStats, Game, Player)


def empty(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as db:
        for table in TABLES:
            db.execute(delete(table))


@dataclass
class Env:
    sessions: sessionmaker[Session]
    games: Games
    clock: Clock
    url: str
    names: Iterator[int] = field(default_factory=lambda: iter(range(1, 10_000)))

    def player(self, name: str | None = None) -> str:
        with self.sessions.begin() as db:
            player, _ = create_player(db, name or f"stats{next(self.names):04d}")
            return player.id

    def name(self, player_id: str) -> str:
        with self.sessions() as db:
            player = db.get(Player, player_id)
            assert player is not None
            return player.name

    def start(
        self, player_id: str, slug: str = "quadrangle", deal: int = 1, *, rated: bool = True
    ) -> str:
        """A game of ``deal``: rated as if the server had drawn that number, or casual (the
        player chose it)."""
        if not rated:
            return self.games.start(player_id, slug, deal).record.id
        self.games._rng = Drawn(deal)  # type: ignore[assignment]
        view = self.games.start(player_id, slug)
        assert view.record.deal == deal and view.record.rated
        return view.record.id

    def play(self, player_id: str, game_id: str, moves: list[Move] | tuple[Move, ...]) -> None:
        version = self.games.get(game_id, player_id).record.version
        for move in moves:
            version = self.games.move(game_id, player_id, move, version).view.record.version

    def first_move(self, player_id: str, game_id: str) -> None:
        view = self.games.get(game_id, player_id)
        self.play(player_id, game_id, [view.legal_moves[0]])

    def played(
        self, player_id: str, slug: str = "quadrangle", deal: int = 1, *, rated: bool = True
    ) -> str:
        """A game with one move, left unfinished."""
        game_id = self.start(player_id, slug, deal, rated=rated)
        self.first_move(player_id, game_id)
        return game_id

    def lost(
        self, player_id: str, slug: str = "quadrangle", deal: int = 1, *, rated: bool = True
    ) -> str:
        """A game with one move, then resigned."""
        game_id = self.played(player_id, slug, deal, rated=rated)
        self.games.resign(game_id, player_id)
        return game_id

    def win(
        self,
        player_id: str,
        *,
        extra_undo: bool = False,
        rated: bool = True,
        deal: int = WIN_DEAL,
    ) -> str:
        """A won Corners game, by the found line; ``extra_undo`` plays one move twice with an
        undo in between (one more move, one undo)."""
        line = winning_line(WIN_GAME, deal)
        game_id = self.start(player_id, WIN_GAME, deal, rated=rated)
        if extra_undo:
            i = undoable_index(line, WIN_GAME, deal)
            self.play(player_id, game_id, line[: i + 1])
            self.games.undo(game_id, player_id)
            self.play(player_id, game_id, line[i:])
        else:
            self.play(player_id, game_id, line)
        assert self.games.get(game_id, player_id).record.status == "won"
        return game_id

    def stats(self, player_id: str, game: str) -> PlayerStats | None:
        with self.sessions() as db:
            return db.get(PlayerStats, (player_id, game))

    def record(self, game_id: str) -> Game:
        with self.sessions() as db:
            found = db.get(Game, game_id)
            assert found is not None
            return found

    def boards(self, min_games: int = 10) -> Leaderboards:
        return Leaderboards(self.sessions, min_games, today=self.clock.today)


@pytest.fixture(scope="module")
def stats_db(
    backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, sessionmaker[Session]]]:
    url = stats_database(backend, tmp_path_factory.mktemp("stats"), "ph_test_stats_svc")
    engine = make_engine(url)
    yield url, make_sessionmaker(engine)
    engine.dispose()


@pytest.fixture()
def env(
    stats_db: tuple[str, sessionmaker[Session]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Env]:
    url, sessions = stats_db
    empty(sessions)
    clock = Clock()
    monkeypatch.setattr(games_module, "now", clock)
    store = MoveStore.open(sessions.kw["bind"])
    games = Games(sessions, DEVELOPMENT_KEY, store=store)
    yield Env(sessions, games, clock, url)
    store.close()


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive UTC datetimes, PostgreSQL aware ones."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


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
    assert Deals(env.sessions, DEVELOPMENT_KEY).summary("quadrangle", 1).played == 0  # unfinished

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
    summary = Deals(env.sessions, DEVELOPMENT_KEY).summary(WIN_GAME, WIN_DEAL)
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
    deals = Deals(env.sessions, DEVELOPMENT_KEY)
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
    games = Games(env.sessions, DEVELOPMENT_KEY, idle_cap_ms=10_000, store=env.games.store)
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


# -- deals -----------------------------------------------------------------------------------------


def test_a_deal_records_plays_wins_fewest_moves_and_fastest_time(env: Env) -> None:
    ann, bob, cat, dan = (env.player(n) for n in ("Ann", "Bob", "Cat", "Dan"))
    fewest = env.win(ann, rated=False)  # the line as found
    env.clock.step = timedelta(milliseconds=200)
    fastest = env.win(bob, extra_undo=True, rated=False)  # one move more, on a faster clock
    env.clock.step = timedelta(seconds=1)
    resigned = env.lost(cat, WIN_GAME, WIN_DEAL, rated=False)
    env.played(dan, WIN_GAME, WIN_DEAL, rated=False)  # unfinished: not on the deal's record
    summary = Deals(env.sessions, DEVELOPMENT_KEY).summary(WIN_GAME, str(WIN_DEAL), ann)
    assert (summary.played, summary.won, summary.win_rate) == (3, 2, 2 / 3)
    assert summary.fewest_moves is not None and summary.fastest is not None
    assert (summary.fewest_moves.id, summary.fewest_moves.player) == (fewest, "Ann")
    assert summary.fewest_moves.moves == len(winning_line())
    assert (summary.fastest.id, summary.fastest.player) == (fastest, "Bob")
    assert summary.fastest.moves == len(winning_line()) + 1
    assert summary.fastest.duration_ms is not None and summary.fewest_moves.duration_ms is not None
    assert summary.fastest.duration_ms < summary.fewest_moves.duration_ms
    assert [g.id for g in summary.finished] == [resigned, fastest, fewest]  # latest first
    data = deal_json(summary)
    assert data["fewest_moves"]["player"] == "Ann" and data["fastest"]["player"] == "Bob"
    assert data["played"] == 3 and data["won"] == 2


def test_a_deal_counts_each_players_first_finished_game_only(env: Env) -> None:
    ann, bob = env.player("Ann"), env.player("Bob")
    first = env.lost(ann, WIN_GAME, WIN_DEAL, rated=False)
    env.clock.step = timedelta(milliseconds=10)
    env.win(ann, rated=False)  # a replay of a known deal: faster and won, and counts for nothing
    env.win(ann, rated=False)
    env.clock.step = timedelta(seconds=1)
    bobs = env.win(bob, extra_undo=True, rated=False)
    deals = Deals(env.sessions, DEVELOPMENT_KEY)
    summary = deals.summary(WIN_GAME, WIN_DEAL, ann)
    assert (summary.played, summary.won) == (2, 1)
    assert summary.fewest_moves is not None and summary.fewest_moves.id == bobs
    assert summary.fastest is not None and summary.fastest.id == bobs
    assert [g.id for g in summary.finished] == [bobs, first]


def test_finished_games_and_replays_open_only_to_players_who_finished_the_deal(env: Env) -> None:
    ann, bob, cat = (env.player(n) for n in ("Ann", "Bob", "Cat"))
    won = env.win(ann, rated=False)
    deals = Deals(env.sessions, DEVELOPMENT_KEY)
    for viewer in (None, cat):  # never played it: counts and records, no replays
        summary = deals.summary(WIN_GAME, WIN_DEAL, viewer)
        assert (summary.played, summary.won, summary.replays_open) == (1, 1, False)
        assert summary.finished == []
        assert summary.fewest_moves is not None and summary.fewest_moves.replay_url is None
        assert deal_json(summary)["fewest_moves"]["replay"] is None
    bobs = env.played(bob, WIN_GAME, WIN_DEAL, rated=False)
    in_play = deals.summary(WIN_GAME, WIN_DEAL, bob)
    assert in_play.finished == [] and in_play.viewer_game == bobs
    env.games.resign(bobs, bob)
    done = deals.summary(WIN_GAME, WIN_DEAL, bob)
    assert done.replays_open and done.viewer_game is None
    assert done.fewest_moves is not None and done.fewest_moves.replay_url == f"/games/{won}/replay"
    assert {g.id for g in done.finished} == {won, bobs}


def test_the_deal_of_the_day_ranks_each_players_first_game_of_the_day(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        daily_module, "daily_deal", lambda slug, day, key: WIN_DEAL if day == START.date() else 1
    )
    eve, ann, bob, cat = (env.player(n) for n in ("Eve", "Ann", "Bob", "Cat"))
    env.clock.at = START - timedelta(days=1)
    env.win(eve, rated=False)  # yesterday: not in today's results
    env.clock.at = START
    env.clock.step = timedelta(milliseconds=100)
    env.win(bob, extra_undo=True, rated=False)  # faster, but one move more
    env.clock.step = timedelta(seconds=1)
    env.win(ann, rated=False)
    env.lost(cat, WIN_GAME, WIN_DEAL, rated=False)
    env.win(cat, rated=False)  # Cat's second game of the deal: not ranked
    env.win(eve, rated=False)  # Eve's second game (her first was yesterday): not ranked
    deals = Deals(env.sessions, DEVELOPMENT_KEY, today=env.clock.today)
    day = env.clock.today()
    during = deals.summary(WIN_GAME, WIN_DEAL, ann)
    # Sealed all day (contract v3): the counts, nothing that ranks or replays.
    assert during.sealed is not None and during.sealed.until is not None
    assert (during.daily, during.daily_results, during.finished) == (day, None, [])
    assert during.fewest_moves is None and during.fastest is None and not during.replays_open
    assert during.played == 4  # each player's first finished game
    env.clock.at = START + timedelta(days=1)  # the day is over: its results open
    summary = deals.summary(WIN_GAME, WIN_DEAL, ann)
    assert summary.sealed is None and summary.daily == day
    assert summary.daily_results is not None
    assert [g.player for g in summary.daily_results] == ["Ann", "Bob"]  # fewest moves first
    assert deal_json(summary)["daily"] == day.isoformat()
    assert len(summary.finished) == 4  # each player's first finished game
    other = deals.summary(WIN_GAME, WIN_DEAL + 1)
    assert other.daily is None and other.daily_results is None  # the stub says one number
    assert deals.summary("patriarchs", WIN_DEAL).daily == day


def test_a_deal_nobody_played(env: Env) -> None:
    summary = Deals(env.sessions, DEVELOPMENT_KEY).summary("castles-end", 987_654_321)
    assert (summary.played, summary.won, summary.win_rate) == (0, 0, None)
    assert summary.fewest_moves is None and summary.fastest is None and summary.finished == []


def test_every_finished_game_here_replays_to_its_stored_state(env: Env) -> None:
    me = env.player()
    env.win(me, extra_undo=True)
    env.lost(me)
    env.games.resign(env.start(me, "patriarchs", 2), me)
    with env.sessions() as db:
        finished = db.scalars(select(Game.id).where(Game.status != "playing")).all()
    assert len(finished) == 3
    for game_id in finished:
        stored, rebuilt = env.games.replay(game_id)
        assert stored == rebuilt


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
