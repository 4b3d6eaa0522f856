"""Rows pushed to a waiting reader by the delivery itself (app/db/broker.py,
``Subscription.push``): only while the reader waits with nothing queued, never out of order,
queued as before whenever the push cannot take the row, and each distinct ``prepare`` awaited
once per event before any push."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, create_engine

from app.db import broker as broker_module
from app.db.broker import EventRow, InProcessBroker, Subscription
from tests.aio import run


@pytest.fixture()
def engine() -> Iterator[Engine]:
    """Deliveries read nothing: the engine is only what a broker is built with."""
    engine = create_engine("sqlite://")
    yield engine
    engine.dispose()


def _taking(pushed: list[int]) -> Callable[[EventRow], bool]:
    """A push that takes every row, noting its id."""

    def push(row: EventRow) -> bool:
        pushed.append(row.id)
        return True

    return push


def _row(event_id: int, room: str = "ROOMAA") -> EventRow:
    return EventRow(event_id, room, "room", "{}")


def test_a_row_for_a_waiting_reader_is_pushed_and_not_queued() -> None:
    async def scenario() -> None:
        sub = Subscription("ROOMAA")
        pushed: list[int] = []
        sub.push = _taking(pushed)
        reader = asyncio.ensure_future(sub.get())
        await asyncio.sleep(0)  # the reader now waits
        assert sub.offer(_row(1)) and sub.offer(_row(2))
        assert pushed == [1, 2] and sub.queue.empty()
        await asyncio.sleep(0)
        assert not reader.done()  # the reader was not woken for them
        reader.cancel()

    run(scenario())


def test_a_reader_that_is_not_waiting_gets_its_rows_queued_in_order() -> None:
    async def scenario() -> None:
        sub = Subscription("ROOMAA")
        pushed: list[int] = []
        sub.push = _taking(pushed)
        assert not sub.offer(_row(1))  # nobody waits in get(): the reader is busy
        assert (await sub.get()).id == 1
        reader = asyncio.ensure_future(sub.get())
        await asyncio.sleep(0)  # waits now
        sub.push = lambda row: False  # e.g. its room read is not in yet
        assert not sub.offer(_row(2))
        # The reader was handed row 2 but has not run yet: row 3 must queue behind it.
        sub.push = _taking(pushed)
        assert not sub.offer(_row(3))
        assert (await reader).id == 2
        assert (await sub.get()).id == 3
        assert pushed == []

    run(scenario())


def test_a_row_the_push_refuses_or_fails_on_is_queued(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        sub = Subscription("ROOMAA")
        sub.push = lambda row: False
        reader = asyncio.ensure_future(sub.get())
        await asyncio.sleep(0)
        assert not sub.offer(_row(1))
        assert (await reader).id == 1

        def breaks(row: EventRow) -> bool:
            raise RuntimeError("render failed")

        sub.push = breaks
        reader = asyncio.ensure_future(sub.get())
        await asyncio.sleep(0)
        with caplog.at_level(logging.ERROR, logger="app.db.broker"):
            assert not sub.offer(_row(2))
        assert (await reader).id == 2  # the reader's own task meets the row (and its error)
        assert "pushing event 2 failed" in caplog.text

    run(scenario())


def test_a_delivery_prepares_each_event_once_before_pushing_it(engine: Engine) -> None:
    """Equal ``prepare`` callables (one bound method of a shared object) are awaited once per
    event, and before the first push of that event; other rooms' readers are not prepared."""

    def _seeing(
        seen: list[tuple[int, list[int]]], prepared: list[int]
    ) -> Callable[[EventRow], bool]:
        def push(row: EventRow) -> bool:
            seen.append((row.id, list(prepared)))
            return True

        return push

    class Shared:
        def __init__(self) -> None:
            self.prepared: list[int] = []

        async def prepare(self, row: EventRow) -> None:
            await asyncio.sleep(0)
            self.prepared.append(row.id)

    async def scenario() -> None:
        broker = InProcessBroker(engine)
        shared, other = Shared(), Shared()
        seen: list[tuple[int, list[int]]] = []
        readers = []
        for room, owner in (("ROOMAA", shared), ("ROOMAA", shared), ("ROOMBB", other)):
            sub = broker.subscribe(room)
            sub.prepare = owner.prepare
            sub.push = _seeing(seen, owner.prepared)
            readers.append(asyncio.ensure_future(sub.get()))
        await asyncio.sleep(0)
        await broker.deliver([_row(1), _row(2)])
        assert shared.prepared == [1, 2] and other.prepared == []
        assert seen == [(1, [1]), (1, [1]), (2, [1, 2]), (2, [1, 2])]
        assert (broker.delivered, broker.pushed) == (4, 4)
        for reader in readers:
            reader.cancel()

    run(scenario())


def test_a_failing_or_slow_prepare_does_not_hold_up_the_delivery(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prepare that fails, or outlasts ``PREPARE_S``, still lets the event be offered (the
    readers then wait for it in their own tasks); the slow one is not cancelled."""
    monkeypatch.setattr(broker_module, "PREPARE_S", 0.05)

    async def scenario() -> None:
        broker = InProcessBroker(engine)
        finished: list[int] = []

        async def breaks(row: EventRow) -> None:
            raise ConnectionError("database away")

        async def slow(row: EventRow) -> None:
            await asyncio.sleep(0.3)
            finished.append(row.id)

        subs = [broker.subscribe("ROOMAA"), broker.subscribe("ROOMAA")]
        subs[0].prepare, subs[1].prepare = breaks, slow
        loop = asyncio.get_running_loop()
        began = loop.time()
        await broker.deliver([_row(7)])
        assert loop.time() - began < 0.3  # offered before the slow prepare was done
        assert [sub.queue.get_nowait().id for sub in subs] == [7, 7]
        await asyncio.sleep(0.4)
        assert finished == [7]  # the slow prepare went on for the readers

    run(scenario())
