"""What the mirrored service tests share (test_accounts.py, test_history.py, …): a migrated
SQLite file per test module, copied from one migrated once per session (a migration takes about
a second, a copy a millisecond), the game service on it with a clock the test moves, and
players."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import count
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.move_store import MoveStore
from app.db.session import make_engine, make_sessionmaker
from app.engine import DEVELOPMENT_KEY
from app.services.game_views import GameView
from app.services.games import Games
from app.services.players import create_player
from app.services.seal import Sealer
from tests.migrated import empty_tables, migrated_sqlite
from tests.services.stats_env import Drawn

KEY = DEVELOPMENT_KEY
START = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


@dataclass
class Clock:
    """The services' clock: stands still until the test moves it."""

    at: datetime = START

    def __call__(self) -> datetime:
        return self.at

    def move(self, **delta: float) -> datetime:
        self.at += timedelta(**delta)
        return self.at

    def today(self) -> date:
        return self.at.date()


def start_rated(games: Games, player_id: str, slug: str, deal: int) -> GameView:
    """A rated game of ``deal``, as if the server had drawn that number."""
    games._rng = Drawn(deal)  # type: ignore[assignment]
    view = games.start(player_id, slug)
    assert view.record.rated and view.record.deal == deal
    return view


@dataclass
class Db:
    """A migrated SQLite database of one test module, its sessions and the game service."""

    url: str
    sessions: sessionmaker[Session]
    store: MoveStore
    clock: Clock = field(default_factory=Clock)
    names: Iterator[int] = field(default_factory=count)

    def games(self, **options: Any) -> Games:
        sealer = Sealer(KEY, today=self.clock.today, clock=self.clock)
        return Games(
            self.sessions, KEY, store=self.store, stamps=self.clock, sealer=sealer, **options
        )

    def player(self, name: str | None = None) -> str:
        with self.sessions.begin() as db:
            player, _ = create_player(db, name or f"svc{next(self.names):04d}")
            return player.id

    def empty(self) -> None:
        empty_tables(self.sessions)
        self.clock.at = START


def open_db(factory: pytest.TempPathFactory, name: str) -> Iterator[Db]:
    """A module's database (``yield from`` it in a module-scoped fixture)."""
    url = migrated_sqlite(factory, name)
    engine = make_engine(url)
    store = MoveStore.open(engine)
    yield Db(url, make_sessionmaker(engine), store)
    store.close()
    engine.dispose()
