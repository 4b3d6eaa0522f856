"""A room's events as one ordered feed: what a client missed (from the event table), then the
live ones (from the broker), each once. The web streams it as Server-Sent Events."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from starlette.concurrency import run_in_threadpool

from app.db.broker import Dropped, EventRow, InProcessBroker, Prepare, Push
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import EVENT_PAGE

__all__ = ["EventRow", "RoomFeed"]


class RoomFeed:
    def __init__(self, rooms: Rooms, broker: InProcessBroker) -> None:
        self.rooms = rooms
        self.broker = broker

    async def events(
        self, code: str, cursor: int, push: Push | None = None, prepare: Prepare | None = None
    ) -> AsyncGenerator[EventRow, None]:
        """The room's events after ``cursor``, each once, then live ones. Ends when the
        subscriber falls too far behind: the client reconnects with Last-Event-ID.

        With ``push``, once the missed events are out, a live event that finds this reader
        waiting goes to ``push`` from the broker's delivery instead of being yielded
        (:class:`~app.db.broker.Subscription`); one ``push`` refuses is yielded as before."""
        sub = self.broker.subscribe(code)  # before reading the table, so nothing falls between
        try:
            sent: set[int] = set()
            page = await run_in_threadpool(self.rooms.events_after, code, cursor, EVENT_PAGE)
            while page:  # a client away for long may have missed more than a page
                for row in page:
                    sent.add(row.id)
                    yield row
                if len(page) < EVENT_PAGE:
                    break
                page = await run_in_threadpool(
                    self.rooms.events_after, code, page[-1].id, EVENT_PAGE
                )
            newest = max(sent, default=cursor)

            def new(row: EventRow) -> bool:
                if row.id <= cursor or row.id in sent:
                    return False  # already sent (from the table, or before the client reconnected)
                if row.id > newest:
                    sent.clear()
                return True

            if push is not None:
                sub.prepare = prepare
                sub.push = lambda row: not new(row) or push(row)
            while True:
                try:
                    row = await sub.get()
                except Dropped:
                    return
                if new(row):
                    yield row
        finally:
            sub.push = None
            self.broker.unsubscribe(sub)
