"""The live stream of a room: Server-Sent Events (sse-starlette) from the broker.

``GET /rooms/{code}/events`` sends ``event: room|race|progress`` with ``id:`` (the event row's
id) and JSON ``data``. A client that reconnects with ``Last-Event-ID`` first gets every event of
the room after that id, read from the table, then the live ones; without it, ``?after=N`` does
the same (a page passes the last id it rendered), and with neither the stream starts now.
``?view=html`` sends the same events as HTML fragments for the htmx SSE extension
(app/web/room_pages.py); ``?view=board`` the same for the race panel beside a racer's board.
No event carries a card (app/services/race_events.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from app.db.broker import Dropped, EventRow, InProcessBroker
from app.services.rooms import Rooms
from app.web.room_pages import html_events

router = APIRouter()

PING_S = 15  # keeps idle streams open through proxies
SEND_TIMEOUT_S = 10  # a client that takes longer to accept an event is dropped

Render = Callable[[EventRow], Awaitable[str]]


async def json_data(row: EventRow) -> str:
    return row.data


def _cursor(last_event_id: str | None, after: int | None) -> int | None:
    if last_event_id is not None and last_event_id.strip().isdigit():
        return int(last_event_id.strip())
    return after


async def stream(
    rooms: Rooms,
    broker: InProcessBroker,
    code: str,
    cursor: int | None,
    render: Render,
    is_disconnected: Callable[[], Any] | None = None,
) -> AsyncIterator[ServerSentEvent]:
    """The room's events after ``cursor`` (None: from now), each once, then live ones."""
    sub = broker.subscribe(code)  # before reading the table, so nothing falls in between
    try:
        if cursor is None:
            cursor = await run_in_threadpool(rooms.last_event_id, code)
        sent: set[int] = set()
        for row in await run_in_threadpool(rooms.events_after, code, cursor):
            sent.add(row.id)
            yield ServerSentEvent(data=await render(row), event=row.kind, id=str(row.id))
        newest = max(sent, default=cursor)
        while True:
            try:
                row = await sub.get()
            except Dropped:
                return  # too slow: the client reconnects with Last-Event-ID and catches up
            if row.id <= cursor or row.id in sent:
                continue  # already sent (from the table, or before the client reconnected)
            if row.id > newest:
                sent.clear()
            yield ServerSentEvent(data=await render(row), event=row.kind, id=str(row.id))
    finally:
        broker.unsubscribe(sub)


@router.get("/rooms/{code}/events", response_class=EventSourceResponse)
async def room_events(
    request: Request,
    code: str,
    after: Annotated[int | None, Query(ge=0, le=2**62)] = None,
    view: Annotated[str, Query(pattern="^(json|html|board)$")] = "json",
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
) -> EventSourceResponse:
    """Server-Sent Events of a room for members and spectators (contract v2)."""
    rooms: Rooms = request.app.state.rooms
    room = await run_in_threadpool(rooms.get, code)  # 404 for an unknown room
    render: Render = json_data
    if view in ("html", "board"):
        render = html_events(request, rooms, room, on_board=view == "board")
    return EventSourceResponse(
        stream(
            rooms,
            request.app.state.broker,
            room.code,
            _cursor(last_event_id, after),
            render,
        ),
        ping=PING_S,
        send_timeout=SEND_TIMEOUT_S,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
