"""What the statistics tests share (test_stats.py, test_leaderboard.py, test_deals.py): a
database of their own per backend (emptied before each test, so ranks and totals are exact), the
real services playing real legal moves (a won Corners game is found by a small search with the
engine), and a clock the test controls. The fixtures ``stats_db`` and ``env`` are in
tests/services/conftest.py."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from pathlib import Path

import pytest
from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import (
    DailyStats,
    DealStats,
    Game,
    GameDailyStats,
    MoveRecord,
    Player,
    PlayerStats,
)
from app.db.move_store import MoveStore
from app.db.session import make_engine, make_sessionmaker
from app.engine import DEVELOPMENT_KEY, Move, Ruleset, State, get_ruleset
from app.services.deals import Deals
from app.services.games import Games
from app.services.leaderboard import Leaderboards
from app.services.players import create_player
from app.services.seal import Sealer
from tests.databases import fresh_postgres_database, migrate, sqlite_url

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

    def deals(self) -> Deals:
        return Deals(self.sessions, DEVELOPMENT_KEY, self.games.sealer)


@pytest.fixture(scope="module")
def stats_db(
    backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, sessionmaker[Session]]]:
    url = stats_database(backend, tmp_path_factory.mktemp("stats"), "ph_test_stats_svc")
    engine = make_engine(url)
    yield url, make_sessionmaker(engine)
    engine.dispose()


@pytest.fixture()
def env(stats_db: tuple[str, sessionmaker[Session]]) -> Iterator[Env]:
    url, sessions = stats_db
    empty(sessions)
    clock = Clock()
    store = MoveStore.open(sessions.kw["bind"])
    sealer = Sealer(DEVELOPMENT_KEY, today=clock.today)
    games = Games(sessions, DEVELOPMENT_KEY, store=store, stamps=clock, sealer=sealer)
    yield Env(sessions, games, clock, url)
    store.close()


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive UTC datetimes, PostgreSQL aware ones."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
