"""What the rooms' tests share: a migrated SQLite database per module (emptied before each
test), the real game service over it, a clock the test moves, and the event ids published."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.move_store import MoveStore
from app.engine import DEVELOPMENT_KEY
from app.services.games import Games
from app.services.players import create_player
from app.services.rooms import events as race_events
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import Limits
from app.services.seal import Sealer
from tests.migrated import empty_tables, sqlite_sessions

START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
COUNTDOWN_S = 3.0


@dataclass
class Clock:
    """The services' clock: it stands still until the test moves it."""

    at: datetime = START

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> datetime:
        self.at += timedelta(seconds=seconds)
        return self.at

    def today(self) -> date:
        return self.at.date()


@dataclass
class Published:
    """Stands in for the broker: the event ids handed to it, call by call."""

    calls: list[list[int]] = field(default_factory=list)

    def __call__(self, ids: list[int]) -> None:
        self.calls.append(list(ids))

    @property
    def ids(self) -> list[int]:
        return [i for call in self.calls for i in call]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "rooms") as sessions:
        yield sessions


@pytest.fixture()
def clock(sessions: sessionmaker[Session]) -> Clock:
    empty_tables(sessions)  # every test starts from an empty database
    # Emptied, SQLite hands out the same race ids again, which the app never sees (races are
    # never deleted): forget the rooms of the previous test's races.
    race_events._ROOMS.clear()
    return Clock()


@pytest.fixture()
def published() -> Published:
    return Published()


@pytest.fixture()
def games(sessions: sessionmaker[Session], clock: Clock, published: Published) -> Iterator[Games]:
    store = MoveStore.open(sessions.kw["bind"])
    sealer = Sealer(DEVELOPMENT_KEY, today=clock.today, clock=clock)
    made = Games(
        sessions, DEVELOPMENT_KEY, store=store, stamps=clock, sealer=sealer, publish=published
    )
    made._rng = random.Random(2026)  # type: ignore[assignment]  # the same deals every run
    yield made
    store.close()


@pytest.fixture()
def rooms(
    sessions: sessionmaker[Session], games: Games, clock: Clock, published: Published
) -> Rooms:
    limits = Limits(countdown_s=COUNTDOWN_S, max_members=3, rooms_per_player=2)
    return Rooms(sessions, games, limits, publish=published, clock=clock)


@pytest.fixture()
def player(sessions: sessionmaker[Session]) -> Callable[[str], str]:
    """Makes a player with this name; their id."""

    def make(name: str) -> str:
        with sessions.begin() as db:
            made, _ = create_player(db, name)
            return made.id

    return make
