"""The live stream of a room: Server-Sent Events (sse-starlette) from the broker.

``GET /rooms/{code}/events`` sends ``event: room|race|progress`` with ``id:`` (the event row's
id) and JSON ``data``. A client that reconnects with ``Last-Event-ID`` first gets every event of
the room after that id, read from the table, then the live ones; without it, ``?after=N`` does
the same (a page passes the last id it rendered), and with neither the stream starts now.
Both take an event id, a whole number from 0 to :data:`EVENT_ID_MAX` (the event table's id is
a 32-bit integer on PostgreSQL): a larger one is refused with a 422 page before anything is
read, as a negative ``after`` is (no event can have such an id, and an empty stream that waits
for one forever would hide the mistake). A ``Last-Event-ID`` that is not a number at all is
ignored, as if the client had sent none.
``?view=html`` sends the same events as HTML fragments for the htmx SSE extension
(app/web/pages/rooms.py); ``?view=board`` the same for the race panel beside a racer's board.
No event carries a card (app/services/rooms/events.py).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Generator
from types import CoroutineType
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from sse_starlette import EventSourceResponse
from sse_starlette.sse import SendTimeoutError
from starlette.concurrency import run_in_threadpool
from starlette.types import Message, Send

from app.services.rooms.feed import EventRow, RoomFeed
from app.services.rooms.views import EVENT_ID_MAX
from app.web.deps import RoomFeedDep, RoomsDep
from app.web.pages.rooms import RowRenderer, html_events

router = APIRouter()

PING_S = 15  # keeps idle streams open through proxies
SEND_TIMEOUT_S = 10  # a client that takes longer to accept an event is dropped


class EventStream(EventSourceResponse):
    """sse-starlette's response, with a cheaper deadline on each send, and events pushed to it
    from the broker's delivery.

    **The deadline.** The library wraps every send in an anyio cancel scope (``move_on_after``,
    made even when there is no timeout): one room event to a thousand streams is a thousand
    scopes, a sizeable share of what the event costs each stream (bench/fanout.py). Here a send
    first runs until it would wait: a client that keeps up takes the event into its socket's
    buffer at once, and that send needs no deadline (asyncio's timeout still costs ~9 µs a send:
    a timer made and cancelled). Only a send that waits (a client that has not read what it was
    sent) goes on under asyncio's timeout, with the same deadline, and a stream without a
    ``send_timeout`` gets none at all.

    **Pushed events** (:meth:`push`). A live event for a stream whose task is idle (waiting for
    the next event, nothing queued) is sent by the broker's delivery itself, in the same way:
    one call per stream, without waking the stream's task twice (its queue, then its turn after
    the room read). A pushed send that would wait goes on in a task of its own under the
    deadline; until it is done the stream takes no other push, and the stream's own sends (the
    next events, queued meanwhile, and the pings) wait for it first, so the client gets every
    event in order. If it fails (the deadline passed, the connection broke), the stream's task
    is interrupted and ends with that error, as a send of its own would have.

    (Overrides the private ``_send_with_timeout`` and ``_stream_response`` of sse-starlette
    3.7.0, which is pinned; tests/web/pages/test_live_send.py and test_live_push.py hold them to
    the library's behaviour.)"""

    _send: Send | None = None  # the stack's send, once the stream's start went through it
    _task: asyncio.Task[Any] | None = None  # the task that sends the stream's own events
    _pushed: asyncio.Task[None] | None = None  # a pushed send that waits, going on
    _joining = False  # the stream's task waits for the pushed send
    _failure: BaseException | None = None  # what ended a pushed send
    _interrupted = False  # the stream's task was cancelled to meet _failure

    def push(self, chunk: bytes) -> bool:
        """Sends ``chunk`` from the caller's task; False (nothing sent) if the stream has not
        started, has ended, or a pushed send is still going on."""
        send = self._send
        if send is None or not self.active or self._pushed is not None:
            return False
        if self._failure is not None:
            return False
        sending = send({"type": "http.response.body", "body": chunk, "more_body": True})
        rest: Awaitable[None] = sending
        if isinstance(sending, CoroutineType):
            try:
                waits_on = sending.send(None)
            except StopIteration:
                return True
            except Exception as exc:
                self._fail(exc)
                return True
            rest = _Rest(sending, waits_on)
        self._pushed = asyncio.ensure_future(self._finish(rest))
        return True

    async def _finish(self, rest: Awaitable[None]) -> None:
        try:
            await self._under_deadline(rest)
        except Exception as exc:
            self._fail(exc)
        else:
            self._pushed = None

    def _fail(self, exc: BaseException) -> None:
        self._failure = exc
        task = self._task
        if task is not None and not self._joining and not task.done():
            self._interrupted = True
            task.cancel()

    async def _stream_response(self, send: Send) -> None:
        # The body (and so any push) only starts after the start has gone through ``send``.
        self._task, self._send = asyncio.current_task(), send
        try:
            await super()._stream_response(send)
        except asyncio.CancelledError:
            task, failure = self._task, self._failure
            if self._interrupted and failure is not None and task is not None:
                self._interrupted = False
                if task.uncancel() == 0:  # cancelled by _fail alone
                    raise failure from None
            raise
        finally:
            self._send = None
            if self._pushed is not None:
                self._pushed.cancel()

    async def settled(self) -> None:
        """Waits for a pushed send that is going on; raises what ended it, in the stream's
        task. (A ping that finds the stream failed sends nothing: the stream's task ends.)"""
        pushed = self._pushed
        if pushed is not None:
            mine = asyncio.current_task() is self._task
            self._joining |= mine
            try:
                await asyncio.shield(pushed)
            finally:
                self._joining &= not mine
        if self._failure is not None and asyncio.current_task() is self._task:
            raise self._failure

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        await self.settled()
        if self._failure is not None:
            return  # a ping: the stream's task ends with the failure
        if self.send_timeout is None:
            await send(message)
            return
        sending = send(message)
        rest: Awaitable[None] = sending
        if isinstance(sending, CoroutineType):
            try:
                waits_on = sending.send(None)
            except StopIteration:
                return
            rest = _Rest(sending, waits_on)
        await self._under_deadline(rest)

    async def _under_deadline(self, rest: Awaitable[None]) -> None:
        if self.send_timeout is None:
            await rest
            return
        deadline = asyncio.timeout(self.send_timeout)
        try:
            async with deadline:
                await rest
        except TimeoutError:
            if deadline.expired():
                raise SendTimeoutError() from None
            raise


class _Rest:
    """The rest of a coroutine that has run up to its first wait (``waits_on``, what it gave
    its task to wait for), awaited as the coroutine itself would have been: the task's answers,
    a cancellation included, go on to it."""

    __slots__ = ("_coroutine", "_waits_on")

    def __init__(self, coroutine: Coroutine[Any, Any, None], waits_on: Any) -> None:
        self._coroutine, self._waits_on = coroutine, waits_on

    def __await__(self) -> Generator[Any, Any, None]:
        coroutine, waits_on = self._coroutine, self._waits_on
        try:
            while True:
                try:
                    answer = yield waits_on
                except GeneratorExit:
                    coroutine.close()
                    raise
                except BaseException as exc:  # handed on, as `await` would
                    waits_on = coroutine.throw(exc)
                else:
                    waits_on = coroutine.send(answer)
        except StopIteration:
            return


_DIGITS = re.compile(r"[0-9]+")  # ASCII only: "²".isdigit() is true, and int("²") fails


def _cursor(last_event_id: str | None, after: int | None) -> int | None:
    """Where the stream starts: ``Last-Event-ID`` (a reconnecting client) before ``after``.

    A ``Last-Event-ID`` beyond any event id is refused as ``after`` is (422), so that the
    database is never asked about a number its id column cannot hold."""
    text = (last_event_id or "").strip()
    if not _DIGITS.fullmatch(text):
        return after
    if int(text) > EVENT_ID_MAX:
        raise RequestValidationError(
            [
                {
                    "loc": ("header", "Last-Event-ID"),
                    "msg": f"Last-Event-ID must be an event id from 0 to {EVENT_ID_MAX}",
                    "type": "less_than_equal",
                }
            ]
        )
    return int(text)


async def stream(
    feed: RoomFeed,
    code: str,
    cursor: int,
    render: RowRenderer,
    response: Callable[[], EventStream],
) -> AsyncGenerator[bytes, None]:
    """The room's events after ``cursor``, each once, then live ones, as Server-Sent Events
    (encoded by ``render``: an html stream's are encoded once for every stream). A live event
    that finds the stream idle is pushed to ``response`` by the broker's delivery, if ``render``
    has it without waiting; any other is yielded here."""

    def push(row: EventRow) -> bool:
        chunk = render.ready(row)
        return chunk is not None and response().push(chunk)

    async for row in feed.events(code, cursor, push, render.prepare):
        yield await render(row)
    await response().settled()  # the stream's end goes out after what was pushed


EVENTS_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "`text/event-stream`: `event: room|race|progress`, `id:` and JSON "
        '`data` (progress: `{"player", "game", "moves", "foundation_cards", "status"}`; '
        "race: the room's `race`). It stays open: reconnect with `Last-Event-ID`.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    404: {
        "description": "No room with that code (a page: this route is not under /api).",
        "content": {"text/html": {"schema": {"type": "string"}}},
    },
    422: {
        "description": "A malformed `after` or `view`, or an `after` or `Last-Event-ID` beyond "
        f"any event id (more than {EVENT_ID_MAX}): a page, as the 404. Nothing is streamed.",
        "content": {"text/html": {"schema": {"type": "string"}}},
    },
    503: {
        "description": "The database is unavailable: try again after `Retry-After` seconds.",
        "content": {"text/html": {"schema": {"type": "string"}}},
    },
}


@router.get(
    "/rooms/{code}/events",
    response_class=EventSourceResponse,
    responses=EVENTS_DOC,
    tags=["rooms"],
)
async def room_events(
    request: Request,
    rooms: RoomsDep,
    feed: RoomFeedDep,
    code: str,
    after: Annotated[int | None, Query(ge=0, le=EVENT_ID_MAX)] = None,
    view: Annotated[str, Query(pattern="^(json|html|board)$")] = "json",
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
) -> EventSourceResponse:
    """Server-Sent Events of a room for members and spectators (contract v2).

    `Last-Event-ID` (sent by a reconnecting `EventSource`) or `after` name the last event the
    client has: the stream first sends every later event of the room, then the live ones. Both
    are event ids from 0 to 2147483647; a larger number is answered 422 (a page) and nothing is
    streamed. A `Last-Event-ID` that is not a whole number is ignored."""
    cursor = _cursor(last_event_id, after)  # before any read: a bad cursor is a 422
    room = await run_in_threadpool(rooms.get, code)  # 404 for an unknown room
    render = RowRenderer()
    if view in ("html", "board"):
        render = html_events(request, rooms, room, on_board=view == "board")
    if cursor is None:
        # "Now" is fixed before the headers go out: a client that acts once its stream is
        # open sees its own event, however late the stream's first read runs.
        cursor = await run_in_threadpool(rooms.last_event_id, room.code)
    response: EventStream = EventStream(
        # The events are pushed to the response that sends them (assigned before any is).
        stream(feed, room.code, cursor, render, lambda: response),
        ping=PING_S,
        send_timeout=SEND_TIMEOUT_S,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
    return response
