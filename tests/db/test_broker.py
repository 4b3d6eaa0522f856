"""The event broker in one process (app/db/broker.py) over a migrated SQLite events table:
published ids reach the subscribers of their room, once, read in one query per wake-up.
The PostgreSQL broker's batched NOTIFYs: test_broker_notify.py; slow subscribers being
dropped: tests/web/test_live.py."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise

import pytest
from sqlalchemy import Engine, insert

from app.db.broker import (
    FANOUT_SLICE,
    Dropped,
    EventRow,
    InProcessBroker,
    PostgresBroker,
    Subscription,
    last_event_id,
    make_broker,
    read_events,
    read_events_after,
)
from app.db.models import Event
from app.db.session import make_engine
from tests.aio import Turns, run, until
from tests.migrated import migrated_sqlite

ROOMS = ["ROOMAA", "ROOMBB", "ROOMAA", "ROOMCC", "ROOMAA"]  # events 1..5


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = make_engine(migrated_sqlite(tmp_path_factory, "broker"))
    at = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as db:
        for room in ROOMS:
            db.execute(
                insert(Event).values(room_code=room, kind="progress", data="{}", created_at=at)
            )
    yield engine
    engine.dispose()


def test_the_table_is_read_by_ids_and_after_an_id_in_order(engine: Engine) -> None:
    assert [r.id for r in read_events(engine, [5, 1, 3, 99])] == [1, 3, 5]
    assert read_events(engine, [2]) == [EventRow(2, "ROOMBB", "progress", "{}")]
    assert [r.id for r in read_events_after(engine, 2)] == [3, 4, 5]
    assert [r.id for r in read_events_after(engine, 0, limit=2)] == [1, 2]
    assert read_events_after(engine, 5) == []
    assert last_event_id(engine) == 5


def test_an_empty_table_has_last_id_zero(tmp_path_factory: pytest.TempPathFactory) -> None:
    empty = make_engine(migrated_sqlite(tmp_path_factory, "no_events"))
    try:
        assert last_event_id(empty) == 0
    finally:
        empty.dispose()


def test_published_events_reach_the_subscribers_of_their_room_only(engine: Engine) -> None:
    async def scenario() -> None:
        broker = InProcessBroker(engine)
        await broker.start()
        try:
            aa, also_aa, cc = (broker.subscribe(r) for r in ("ROOMAA", "ROOMAA", "ROOMCC"))
            broker.publish([1, 2, 3])
            broker.publish([4])
            assert [(await aa.get()).id for _ in range(2)] == [1, 3]
            assert [(await also_aa.get()).id for _ in range(2)] == [1, 3]
            assert (await cc.get()) == EventRow(4, "ROOMCC", "progress", "{}")
            assert aa.queue.empty() and cc.queue.empty()  # event 2 is ROOMBB's: nobody's here
            assert broker.delivered == 5 and broker.last_id == 4
        finally:
            await broker.stop()
        assert broker.loop is None

    run(scenario())


def test_an_event_read_twice_is_delivered_once(engine: Engine) -> None:
    async def scenario() -> None:
        broker = InProcessBroker(engine)
        sub = broker.subscribe("ROOMAA")
        row = EventRow(5, "ROOMAA", "progress", "{}")
        await broker.deliver([row])
        await broker.deliver([row, EventRow(6, "ROOMAA", "race", "{}")])  # a catch-up and a retry
        assert [(await sub.get()).id for _ in range(2)] == [5, 6]
        assert sub.queue.empty() and broker.delivered == 2 and broker.last_id == 6

    run(scenario())


def test_without_subscribers_nothing_is_read_but_the_last_id_moves_on(engine: Engine) -> None:
    reads: list[list[int]] = []

    class Counting(InProcessBroker):
        async def _read(self, ids: list[int]) -> list[EventRow]:
            reads.append(ids)
            return await super()._read(ids)

    async def scenario() -> None:
        broker = Counting(engine)
        await broker.start()
        try:
            broker.publish([1, 2])
            await until(lambda: broker.last_id == 2)
            sub = broker.subscribe("ROOMAA")
            broker.publish([5])
            assert (await sub.get()).id == 5  # the second wake-up, with a subscriber
        finally:
            await broker.stop()
        assert reads == [[5]]  # the first wake-up read nothing

    run(scenario())


def test_a_delivery_that_fails_does_not_end_the_dispatcher(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever breaks one delivery, the next events still reach the room's streams."""

    class Breaking(InProcessBroker):
        failures = 1

        async def deliver(self, rows: list[EventRow]) -> None:
            if self.failures:
                self.failures -= 1
                raise RuntimeError("a bug in a delivery")
            await super().deliver(rows)

    async def scenario() -> None:
        broker = Breaking(engine)
        await broker.start()
        try:
            sub = broker.subscribe("ROOMAA")
            broker.publish([1])
            await until(lambda: broker.failures == 0)
            broker.publish([3])
            assert (await asyncio.wait_for(sub.get(), 10)).id == 3
        finally:
            await broker.stop()

    with caplog.at_level(logging.ERROR, logger="app.db.broker"):
        run(scenario())
    assert "delivering events [1] failed" in caplog.text


def test_events_whose_read_failed_are_read_again_at_the_next_wake_up(engine: Engine) -> None:
    class Failing(InProcessBroker):
        failures = 1

        async def _read(self, ids: list[int]) -> list[EventRow]:
            if self.failures:
                self.failures -= 1
                raise OSError("the database is away")
            return await super()._read(ids)

    async def scenario() -> None:
        broker = Failing(engine)
        await broker.start()
        try:
            sub = broker.subscribe("ROOMAA")
            broker.publish([1])  # its read fails: the row is committed, so it is kept
            await until(lambda: broker.failures == 0)
            broker.publish([3])  # the next wake-up reads both
            assert [(await sub.get()).id for _ in range(2)] == [1, 3]
        finally:
            await broker.stop()

    run(scenario())


def test_publishing_while_not_serving_is_harmless_and_ids_are_not_queued(
    engine: Engine,
) -> None:
    broker = InProcessBroker(engine)
    sub = broker.subscribe("ROOMAA")
    broker.publish([1, 3])  # an operator command: no loop, the rows wait in the table
    broker.publish([])
    assert sub.queue.empty() and broker.last_id == 0
    broker.close()


def test_unsubscribing_the_last_subscriber_forgets_the_room(engine: Engine) -> None:
    async def scenario() -> None:
        broker = InProcessBroker(engine)
        first, second = broker.subscribe("ROOMAA"), broker.subscribe("ROOMAA")
        broker.subscribe("ROOMBB")
        assert broker.subscribers == 3
        broker.unsubscribe(first)
        broker.unsubscribe(first)  # twice: nothing more goes
        assert broker.subscribers == 2 and "ROOMAA" in broker.rooms
        broker.unsubscribe(second)
        assert set(broker.rooms) == {"ROOMBB"}

    run(scenario())


def test_each_database_gets_its_broker(engine: Engine) -> None:
    assert type(make_broker(engine)) is InProcessBroker
    # Making the PostgreSQL broker connects to nothing yet.
    postgres = make_engine("postgresql+psycopg://ph:secret@db.invalid:5432/hall")
    try:
        broker = make_broker(postgres)
        assert isinstance(broker, PostgresBroker)
        # LISTEN and the reader use libpq's own URL, with the password.
        assert broker.dsn == "postgresql://ph:secret@db.invalid:5432/hall"
        assert broker.notifier.url == postgres.url
        broker.close()
    finally:
        postgres.dispose()


def test_the_postgres_broker_notifies_at_once_when_not_started(engine: Engine) -> None:
    postgres = make_engine("postgresql+psycopg://ph@db.invalid:5432/hall")
    sent: list[list[int]] = []

    class Recording(PostgresBroker):
        def _notify(self, ids: list[int]) -> None:
            sent.append(ids)

    broker = Recording(postgres)
    try:
        broker.publish([7])
        broker.publish([])
        broker.publish([8, 9])
        assert sent == [[7], [8, 9]]  # one NOTIFY each, without a sender thread
    finally:
        broker.close()
        postgres.dispose()


def test_a_notify_that_fails_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    # The change is committed already: a client catches up from the table.
    postgres = make_engine(
        "postgresql+psycopg://ph@127.0.0.1:1/hall", pool_size=1
    )  # nothing listens on port 1
    broker = PostgresBroker(postgres)
    try:
        broker.publish([1])
        assert broker.notifies == 0
        assert "NOTIFY failed" in caplog.text
    finally:
        broker.close()
        postgres.dispose()


def test_a_slow_subscriber_is_dropped_not_waited_for() -> None:
    async def scenario() -> None:
        broker = InProcessBroker(engine=None)  # type: ignore[arg-type]  # no reads here
        slow = broker.subscribe("ROOMAA")
        fine = broker.subscribe("ROOMAA")
        other = broker.subscribe("ROOMBB")
        rows = [EventRow(i, "ROOMAA", "progress", "{}") for i in range(1, 400)]
        await broker.deliver(rows[:256])
        assert [(await fine.get()).id for _ in range(256)] == list(range(1, 257))
        await broker.deliver(rows[256:])  # the slow one has read nothing: its queue overflows
        assert slow.dropped and not fine.dropped and other.queue.empty()
        with pytest.raises(Dropped):
            await slow.get()
        assert (await fine.get()).id == 257
        broker.unsubscribe(slow)
        assert broker.subscribers == 2

    run(scenario())


def test_a_paced_delivery_lets_the_loop_turn_between_slices_of_subscribers() -> None:
    """Many subscribers of a room: the dispatcher offers an event to FANOUT_SLICE of them, lets
    the event loop serve whatever else is ready (moves), then the next slice; every subscriber
    still gets every event, in order, and two paced deliveries never interleave."""

    async def scenario() -> None:
        broker = InProcessBroker(engine=None)  # type: ignore[arg-type]  # no reads here
        subs = [broker.subscribe("ROOMAA") for _ in range(3 * FANOUT_SLICE + 5)]
        offered_at_each_turn: list[int] = []
        turns = Turns(lambda: offered_at_each_turn.append(broker.delivered))
        first = [EventRow(1, "ROOMAA", "room", "{}"), EventRow(2, "ROOMAA", "room", "{}")]
        second = [EventRow(3, "ROOMAA", "room", "{}")]
        await asyncio.gather(broker.deliver(first), broker.deliver(second))
        turns.stop()
        steps = [b - a for a, b in pairwise(offered_at_each_turn)]
        assert max(steps) == FANOUT_SLICE  # never more offers than a slice in one turn
        assert broker.delivered == 3 * len(subs)
        for sub in subs:
            assert [sub.queue.get_nowait().id for _ in range(3)] == [1, 2, 3]

    run(scenario())


def test_a_waiting_subscriber_wakes_when_dropped() -> None:
    async def scenario() -> None:
        sub = Subscription("ROOMAA")
        waiting = asyncio.ensure_future(sub.get())
        await asyncio.sleep(0)
        sub.offer(EventRow(1, "ROOMAA", "room", "{}"))
        assert (await waiting).id == 1  # the first event reached the waiting reader
        waiting = asyncio.ensure_future(sub.get())
        for i in range(2, 300):  # faster than the reader runs: it overflows
            sub.offer(EventRow(i, "ROOMAA", "room", "{}"))
        assert sub.dropped
        with pytest.raises(Dropped):
            await waiting  # the waiting reader wakes to learn it was dropped
        assert sub.queue.empty()  # what was queued is let go

    run(scenario())
