"""A room's events as one feed (app/services/rooms/feed.py): what a client missed, read from
the table page by page, then the live ones from the broker, each event once, for that room."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.broker import QUEUE_SIZE, EventRow, InProcessBroker
from app.services.rooms import events as race_events
from app.services.rooms import feed as feed_module
from app.services.rooms.feed import RoomFeed
from app.services.rooms.rooms import Rooms
from tests.aio import run
from tests.services.rooms.conftest import Clock

ROOM = "ABCDEF"


def write(sessions: sessionmaker[Session], clock: Clock, count: int, room: str = ROOM) -> list[int]:
    with sessions.begin() as db:
        return [race_events.record(db, room, "room", {"n": n}, clock()) for n in range(count)]


def row(event_id: int, room: str = ROOM) -> EventRow:
    return EventRow(event_id, room, "room", "{}")


async def take(events: AsyncGenerator[EventRow, None], count: int) -> list[int]:
    return [(await anext(events)).id for _ in range(count)]


@pytest.fixture()
def broker(sessions: sessionmaker[Session]) -> InProcessBroker:
    return InProcessBroker(sessions.kw["bind"])  # not started: the tests deliver its rows


def test_catching_up_reads_every_page_after_the_cursor(
    rooms: Rooms,
    broker: InProcessBroker,
    sessions: sessionmaker[Session],
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feed_module, "EVENT_PAGE", 2)
    ids = write(sessions, clock, 6)
    write(sessions, clock, 2, room="OTHERS")

    async def scenario() -> list[int]:
        events = RoomFeed(rooms, broker).events(ROOM, ids[0])
        try:
            return await take(events, 5)
        finally:
            await events.aclose()

    assert run(scenario()) == ids[1:]
    assert broker.subscribers == 0  # a closed feed leaves the broker


def test_live_events_follow_each_once(
    rooms: Rooms, broker: InProcessBroker, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ids = write(sessions, clock, 3)

    async def scenario() -> list[int]:
        events = RoomFeed(rooms, broker).events(ROOM, ids[0])
        try:
            got = await take(events, 1)  # subscribed before the table was read
            assert broker.subscribers == 1
            # The broker announces what the table gave already, an old event, and a new one.
            await broker.deliver([row(ids[0]), row(ids[1]), row(ids[2]), row(ids[2] + 1)])
            return got + await take(events, 2)
        finally:
            await events.aclose()

    assert run(scenario()) == [ids[1], ids[2], ids[2] + 1]


def test_a_subscriber_that_falls_behind_is_ended(
    rooms: Rooms, broker: InProcessBroker, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ids = write(sessions, clock, 1)

    async def scenario() -> list[int]:
        events = RoomFeed(rooms, broker).events(ROOM, 0)
        got = await take(events, 1)
        await broker.deliver([row(ids[0] + n) for n in range(1, QUEUE_SIZE + 2)])
        return got + [e.id async for e in events]  # ends: the client reconnects

    assert run(scenario()) == ids
    assert broker.subscribers == 0
