"""Events pushed to an idle event stream by the broker's delivery (app/web/pages/live.py,
``EventStream.push``): sent from the delivering task, in order with the stream's own sends, and a
pushed send that waits or fails ends the stream as a send of its own would have.

Each test runs the room-events stream (``live.stream``, as the route builds it) as an ASGI
response over a real :class:`RoomFeed` and :class:`InProcessBroker`, with a ``send`` that
records what the client gets and can hold a chosen event back, like a client that stops
reading."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine
from sse_starlette.sse import SendTimeoutError
from starlette.types import Message

from app.db.broker import EventRow, InProcessBroker
from app.services.rooms.feed import RoomFeed
from app.web.pages.live import EventStream, stream
from app.web.pages.rooms import RowRenderer
from tests.aio import run, until

ROOM = "ROOMAA"


@pytest.fixture()
def engine() -> Iterator[Engine]:
    engine = create_engine("sqlite://")  # nothing is read: the feed's table is faked
    yield engine
    engine.dispose()


class _NoTable:
    """The rooms service as the feed uses it: no event is missed, none to read."""

    def events_after(self, code: str, cursor: int, limit: int) -> list[EventRow]:
        return []


def _row(event_id: int) -> EventRow:
    return EventRow(event_id, ROOM, "room", f'{{"n": {event_id}}}')


class Client:
    """The ASGI side of one stream: what it was sent, by which task, and events held back."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.senders: list[asyncio.Task[Any] | None] = []
        self.hold: dict[int, asyncio.Event] = {}  # event id -> released when set
        self.fail: dict[int, BaseException] = {}  # event id -> raised by its send at once
        self.cancelled: list[bytes] = []
        self.disconnect = asyncio.Event()
        self.started = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started.set()
            return
        body = message.get("body", b"")
        for event_id, error in self.fail.items():
            if f"id: {event_id}\r".encode() in body:
                raise error
        for event_id, released in self.hold.items():
            if f"id: {event_id}\r".encode() in body:
                try:
                    await released.wait()
                except asyncio.CancelledError:
                    self.cancelled.append(body)
                    raise
        self.bodies.append(body)
        self.senders.append(asyncio.current_task())

    def ids(self) -> list[int]:
        return [
            int(line.split(b":")[1])
            for body in self.bodies
            for line in body.split(b"\r\n")
            if line.startswith(b"id:")
        ]


class Harness:
    def __init__(self, engine: Engine, send_timeout: float | None = 5, ping: float = 0) -> None:
        self.broker = InProcessBroker(engine)
        self.client = Client()
        feed = RoomFeed(_NoTable(), self.broker)  # type: ignore[arg-type]
        self.response: EventStream = EventStream(
            stream(feed, ROOM, 0, RowRenderer(), lambda: self.response),
            ping=ping,
            send_timeout=send_timeout,
        )
        self._task: asyncio.Task[None] | None = None

    @property
    def task(self) -> asyncio.Task[None]:
        assert self._task is not None, "open() first"
        return self._task

    async def open(self) -> None:
        scope = {"type": "http", "method": "GET", "headers": []}
        self._task = asyncio.ensure_future(
            self.response(scope, self.client.receive, self.client.send)
        )
        await self.client.started.wait()
        await until(lambda: any(sub.waiting for sub in self.subs()))

    def subs(self) -> list[Any]:
        return list(self.broker.rooms.get(ROOM, ()))


def test_an_idle_stream_is_sent_its_events_by_the_delivery_in_order(engine: Engine) -> None:
    async def scenario() -> None:
        h = Harness(engine)
        await h.open()
        await h.broker.deliver([_row(1), _row(2)])
        # Sent during the delivery, from the delivering task: the stream's task never woke.
        assert h.client.ids() == [1, 2]
        assert h.client.senders == [asyncio.current_task()] * 2
        assert (h.broker.delivered, h.broker.pushed) == (2, 2)
        h.client.disconnect.set()
        await h.task

    run(scenario())


def test_events_after_a_pushed_send_that_waits_follow_it_in_order(engine: Engine) -> None:
    """A client slow to take event 1: events 2 and 3 are not pushed past it; the stream's own
    task sends them once event 1 is out."""

    async def scenario() -> None:
        h = Harness(engine)
        await h.open()
        h.client.hold[1] = asyncio.Event()
        await h.broker.deliver([_row(1)])
        await h.broker.deliver([_row(2), _row(3)])
        assert h.broker.pushed == 1  # 2 and 3 were queued behind the send that waits
        for _ in range(20):
            await asyncio.sleep(0)
        assert h.client.ids() == []  # nothing overtook event 1
        h.client.hold[1].set()
        await until(lambda: len(h.client.ids()) == 3)
        assert h.client.ids() == [1, 2, 3]
        stream_task = h.client.senders[1]
        assert stream_task is not asyncio.current_task() and h.client.senders[2] is stream_task
        # Caught up, the stream is idle again and takes pushes.
        await until(lambda: all(sub.waiting for sub in h.subs()))
        await h.broker.deliver([_row(4)])
        assert h.client.ids() == [1, 2, 3, 4] and h.broker.pushed == 2
        h.client.disconnect.set()
        await h.task

    run(scenario())


def test_a_pushed_send_past_the_deadline_ends_the_idle_stream(engine: Engine) -> None:
    async def scenario() -> None:
        h = Harness(engine, send_timeout=0.05)
        await h.open()
        h.client.hold[1] = asyncio.Event()  # never released: a client that reads nothing
        began = asyncio.get_running_loop().time()
        await h.broker.deliver([_row(1)])
        with pytest.raises(SendTimeoutError):
            await asyncio.wait_for(h.task, 30)
        # The deadline ended it, though nothing woke the idle stream's task.
        assert asyncio.get_running_loop().time() - began < 10
        assert h.client.cancelled  # the stuck send was given up
        assert h.subs() == []  # the stream's feed ended: unsubscribed

    run(scenario())


def test_a_pushed_send_that_fails_at_once_ends_the_stream_with_its_error(
    engine: Engine,
) -> None:
    async def scenario() -> None:
        h = Harness(engine)
        await h.open()
        h.client.fail[1] = ConnectionResetError("the client went away")
        began = asyncio.get_running_loop().time()
        await h.broker.deliver([_row(1)])  # the delivery itself goes on
        with pytest.raises(ConnectionResetError, match="the client went away"):
            await asyncio.wait_for(h.task, 30)
        assert asyncio.get_running_loop().time() - began < 10  # at once, not at a wait's end
        assert h.subs() == []

    run(scenario())


def test_a_stream_waiting_for_its_pushed_send_meets_its_failure(engine: Engine) -> None:
    """The stream's own task, sending event 2, waits for pushed event 1; when that fails, the
    stream ends with that failure, and event 2 is not sent."""

    async def scenario() -> None:
        h = Harness(engine, send_timeout=0.1)
        await h.open()
        h.client.hold[1] = asyncio.Event()
        await h.broker.deliver([_row(1)])
        await h.broker.deliver([_row(2)])  # queued: the stream's task wakes and waits
        with pytest.raises(SendTimeoutError):
            await asyncio.wait_for(h.task, 10)
        assert h.client.ids() == []

    run(scenario())


def test_a_ping_waits_for_the_pushed_send(engine: Engine) -> None:
    """Pings fall due every 10 ms: none goes out while pushed event 1 waits for the client;
    the next thing the client gets is event 1, then the pings go on."""

    async def scenario() -> None:
        h = Harness(engine, ping=0.01)
        await h.open()
        h.client.hold[1] = asyncio.Event()
        await h.broker.deliver([_row(1)])
        sent_before = len(h.client.bodies)  # pings may have gone out before the event
        await asyncio.sleep(0.1)  # pings due meanwhile
        assert len(h.client.bodies) == sent_before  # none overtook the event
        h.client.hold[1].set()

        async def a_ping_after() -> None:
            while len(h.client.bodies) < sent_before + 2:
                await asyncio.sleep(0.005)

        await asyncio.wait_for(a_ping_after(), 30)
        assert b"id: 1\r" in h.client.bodies[sent_before]
        assert h.client.bodies[sent_before + 1].startswith(b": ping")
        h.client.disconnect.set()
        await h.task

    run(scenario())


def test_a_disconnect_while_a_pushed_send_waits_ends_it_and_the_stream(engine: Engine) -> None:
    async def scenario() -> None:
        h = Harness(engine)
        await h.open()
        h.client.hold[1] = asyncio.Event()
        await h.broker.deliver([_row(1)])
        h.client.disconnect.set()
        await asyncio.wait_for(h.task, 10)  # ends cleanly
        await until(lambda: bool(h.client.cancelled))
        assert h.subs() == []
        assert not h.response.push(b"data: late\r\n\r\n")  # an ended stream takes no push

    run(scenario())
