"""The event broker: publish after commit, subscribe by room.

Events are rows first (the ``event`` table, written in the transaction of the change they
describe); the broker only tells the processes that new rows exist. A publisher hands it event
ids once its transaction has committed; every process that serves event streams reads those rows
once (one query per batch, however many clients watch) and puts them on the bounded queue of each
subscriber of the row's room. A subscriber whose queue is full is dropped, never waited for: a
slow client never holds up a move, it reconnects and catches up from the table with
``Last-Event-ID``.

Two ways to tell the processes, behind the same interface:

- :class:`InProcessBroker` — one process (the embedded SQLite default): the ids go straight to
  this process's dispatcher.
- :class:`PostgresBroker` — any number of worker processes and app instances on one PostgreSQL:
  after the commit the event ids join this process's batch, and one ``NOTIFY ph_events,
  '<id>,<id>,…'`` per batch (every ``BATCH_S``, 3 ms) tells every process; one dedicated
  ``LISTEN`` connection per process, which reconnects after a database restart and then reads
  every event it may have missed (ids above the last one it saw).

  Both connections must reach the primary itself: LISTEN/NOTIFY does not pass a
  transaction-pooling PgBouncer (nor a read replica). docs/operating.md, "Scaling out".

The same LISTEN connection hears ``ph_players``: a trigger (migration 0015) names a player
whose session version, API token or preferences changed, and the broker tells the watchers
(:meth:`InProcessBroker.watch_players`: the players service's caches). While it listens the
watchers know that every change reaches them; when it drops, and again once it listens anew,
they forget everything, since what changed meanwhile was not heard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from sqlalchemy import Engine, create_engine, func, select, text

from app.db.faults import summary
from app.db.models import Event

log = logging.getLogger(__name__)

CHANNEL = "ph_events"
PLAYERS_CHANNEL = "ph_players"  # the trigger of migration 0015 notifies it
# The LISTEN connections' name in pg_stat_activity: an operator (or a test) finds them by it.
LISTENER_NAME = "patience-hall-listen"
BATCH_S = 0.003  # how long a process gathers event ids before one NOTIFY tells them all
NOTIFY_IDS = 500  # ids per NOTIFY at most (a payload stays far below PostgreSQL's 8000 bytes)
QUEUE_SIZE = 256  # events a subscriber may fall behind by before it is dropped
RECENT_MOST = 4096  # delivered ids remembered against a second delivery
RETRY_MOST = 10_000  # announced events kept to read again after a failed read
# Subscribers offered an event between two turns of the event loop. Each one offered wakes its
# stream, which renders and sends within the same turn: 500 at once made a turn of 14–18 ms
# that every move of the process waited behind (bench/RESULTS.md, the fan-out a slice a turn).
FANOUT_SLICE = 64
# How long a delivery waits for what the pushes of an event need (a room read) before it offers
# the event anyway: the readers then wait for it in their own tasks.
PREPARE_S = 0.5


@dataclass(frozen=True)
class EventRow:
    id: int
    room: str
    kind: str
    data: str  # JSON


class Dropped(Exception):
    """The subscriber fell too far behind and was dropped: reconnect with Last-Event-ID."""


_DROPPED = EventRow(0, "", "", "")  # put on a queue in place of what it could not take


PlayersChanged = Callable[[list[str]], None]  # these players changed: forget them
FeedLive = Callable[[bool], None]  # every change is heard from now (True), or no longer (False)
Push = Callable[[EventRow], bool]  # takes a row to its client at once; False: it cannot now
Prepare = Callable[[EventRow], Awaitable[object]]  # what a push needs, made once per event


@dataclass(eq=False)
class Subscription:
    """A room's events for one reader, who takes them from :attr:`queue` (:meth:`get`).

    A reader may also set :attr:`push`: while it waits for a row with none queued, a row
    offered goes straight to ``push``, called by the broker's delivery, and is not queued:
    one call for each reader of an event instead of waking every reader's task
    (bench/fanout.py). ``push`` answers False when it cannot take the row then; the row is
    queued as it would have been. :attr:`prepare`, awaited by the delivery once per event
    for all the readers that share it, makes what their pushes need (a room read once)."""

    room: str
    queue: asyncio.Queue[EventRow] = field(
        default_factory=lambda: asyncio.Queue(maxsize=QUEUE_SIZE)
    )
    dropped: bool = False
    push: Push | None = None
    prepare: Prepare | None = None
    waiting: bool = False  # the reader waits in get() with nothing queued

    def offer(self, row: EventRow) -> bool:
        """Gives ``row`` to the reader; True if it was pushed, not queued."""
        if self.dropped:
            return False
        push = self.push
        if push is not None and self.waiting and self.queue.empty():
            try:
                if push(row):
                    return True
            except Exception:
                # The reader's own task makes the same row again and meets the error there.
                log.exception("pushing event %s failed; queued instead", row.id)
        self.enqueue(row)
        return False

    def enqueue(self, row: EventRow) -> None:
        """Queues ``row`` for the reader's own task (never pushed)."""
        if self.dropped:
            return
        try:
            self.queue.put_nowait(row)
        except asyncio.QueueFull:
            # Too far behind: what is queued goes, and the reader learns it was dropped.
            self.dropped = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(_DROPPED)

    async def get(self) -> EventRow:
        if self.queue.empty():
            self.waiting = True
            try:
                row = await self.queue.get()
            finally:
                self.waiting = False
        else:
            row = self.queue.get_nowait()
        if row is _DROPPED:
            raise Dropped()
        return row


def read_events(engine: Engine, ids: list[int]) -> list[EventRow]:
    with engine.connect() as db:
        rows = db.execute(
            select(Event.id, Event.room_code, Event.kind, Event.data)
            .where(Event.id.in_(ids))
            .order_by(Event.id)
        ).all()
    return [EventRow(*r) for r in rows]


def read_events_after(engine: Engine, after: int, limit: int = 1000) -> list[EventRow]:
    with engine.connect() as db:
        rows = db.execute(
            select(Event.id, Event.room_code, Event.kind, Event.data)
            .where(Event.id > after)
            .order_by(Event.id)
            .limit(limit)
        ).all()
    return [EventRow(*r) for r in rows]


def last_event_id(engine: Engine) -> int:
    with engine.connect() as db:
        return int(db.scalar(select(func.max(Event.id))) or 0)


class InProcessBroker:
    """Publish and subscribe within one process; the base of the PostgreSQL broker too."""

    coalesce_s = 0.0  # how long a wake-up waits for more announcements before reading

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.loop: asyncio.AbstractEventLoop | None = None
        self.rooms: dict[str, set[Subscription]] = {}
        self.delivered = 0  # events given to subscribers (for tests and benchmarks)
        self.pushed = 0  # of which pushed, not queued
        self.last_id = 0  # the highest event id this process has dispatched
        self._pending: asyncio.Queue[list[int]] | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._recent: set[int] = set()  # ids delivered lately, so none is delivered twice
        self._recent_order: deque[int] = deque()
        # One paced delivery at a time (the dispatcher's and a reconnection's catch-up), so
        # that no subscriber gets a later event before an earlier one.
        self._delivering = asyncio.Lock()
        self._player_watchers: list[tuple[PlayersChanged, FeedLive]] = []

    # -- life -----------------------------------------------------------------------------

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._pending = asyncio.Queue()
        self._tasks = [asyncio.create_task(self._dispatch())]

    def close(self) -> None:
        """Frees what the broker holds outside a running app (nothing, in one process)."""

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.loop = None

    # -- the interface --------------------------------------------------------------------

    def publish(self, ids: list[int]) -> None:
        """Tells every process that these events exist; call it after the commit, from any
        thread. Never blocks on subscribers."""
        if ids:
            self._wake(ids)

    def subscribe(self, room: str) -> Subscription:
        sub = Subscription(room)
        self.rooms.setdefault(room, set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self.rooms.get(sub.room)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self.rooms[sub.room]

    @property
    def subscribers(self) -> int:
        return sum(len(s) for s in self.rooms.values())

    def watch_players(self, changed: PlayersChanged, live: FeedLive) -> None:
        """Tells ``changed`` which players another process (or an operator) changed, and
        ``live`` whether every such change is being heard. In one process nothing is: the
        watcher is never told it is live, and keeps what it reads for a short time only."""
        self._player_watchers.append((changed, live))

    # -- internals ------------------------------------------------------------------------

    def _wake(self, ids: list[int]) -> None:
        loop, pending = self.loop, self._pending
        if loop is None or pending is None or loop.is_closed():
            return  # not serving streams: the rows are in the table for later readers
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(pending.put_nowait, list(ids))

    async def _dispatch(self) -> None:
        assert self._pending is not None
        retry: set[int] = set()  # announced events whose reading failed: read them again
        while True:
            ids = await self._pending.get()
            if self.coalesce_s and self.rooms:
                # Let the announcements of a busy moment gather: one read for many events
                # instead of a round trip each (bench/RESULTS.md, live rooms).
                await asyncio.sleep(self.coalesce_s)
            while not self._pending.empty():
                ids.extend(self._pending.get_nowait())
            if not self.rooms:
                self.last_id = max(self.last_id, *ids)
                retry.clear()
                continue
            wanted = sorted(retry.union(ids))
            try:
                rows = await self._read(wanted)
            except Exception as exc:
                # The database is away. The rows are committed, so they are read again on the
                # next wake-up (the LISTEN connection's reconnection makes one), not lost.
                log.warning("reading events failed: %s", summary(exc))
                retry = set(wanted[-RETRY_MOST:])
                await asyncio.sleep(0.2)
                continue
            retry.clear()
            try:
                await self.deliver(rows)
            except Exception:
                # Never the end of the dispatcher: every live stream of the process would
                # fall silent. The streams missing these rows catch up when they reconnect.
                log.exception("delivering events %s failed", [row.id for row in rows])

    async def _read(self, ids: list[int]) -> list[EventRow]:
        return await asyncio.to_thread(read_events, self.engine, ids)

    async def deliver(self, rows: list[EventRow]) -> None:
        """Offers ``rows`` to their rooms' subscribers, letting the event loop serve everything
        else (moves) after every :data:`FANOUT_SLICE` offers. One delivery at a time, so each
        subscriber still gets the rows in order."""
        async with self._delivering:
            offered = 0
            for row in rows:
                if row.id in self._recent:  # read twice: by a catch-up and a retried read
                    continue
                self._recent_order.append(row.id)
                self._recent.add(row.id)
                if len(self._recent_order) > RECENT_MOST:
                    self._recent.discard(self._recent_order.popleft())
                self.last_id = max(self.last_id, row.id)
                subs = list(self.rooms.get(row.room, ()))
                await self._prepare(row, subs)
                for sub in subs:
                    if offered == FANOUT_SLICE:
                        await asyncio.sleep(0)
                        offered = 0
                    self.pushed += sub.offer(row)
                    self.delivered += 1
                    offered += 1

    @staticmethod
    async def _prepare(row: EventRow, subs: list[Subscription]) -> None:
        """Awaits each distinct :attr:`Subscription.prepare` of ``subs`` once for ``row``.
        A failure is left to the pushes: they answer False, and each reader's task meets it."""
        prepares = {sub.prepare for sub in subs if sub.prepare is not None}
        for prepare in prepares:
            try:
                # Bounded: a slow read must not hold up every other room's events. It goes
                # on (shielded) for the readers, whose own tasks wait for it instead.
                await asyncio.wait_for(asyncio.shield(prepare(row)), PREPARE_S)
            except Exception as exc:  # the deadline (TimeoutError) too
                log.debug("preparing event %s failed: %s", row.id, summary(exc))


class PostgresBroker(InProcessBroker):
    """NOTIFY after commit, one LISTEN connection per process (see the module's docstring)."""

    coalesce_s = 0.003

    def __init__(self, engine: Engine, retry_s: float = 0.5) -> None:
        super().__init__(engine)
        self.retry_s = retry_s
        # The batch of ids to announce, and the thread that sends it (while serving; before
        # ``start`` or after ``stop``, e.g. in an operator command, each publish notifies).
        self._batch: list[int] = []
        self._batch_lock = threading.Lock()
        self._batch_ready = threading.Event()
        self._sender: threading.Thread | None = None
        self._sending = False
        self.notifies = 0  # NOTIFY statements sent (for tests and benchmarks)
        self.listening = asyncio.Event()  # set while the LISTEN connection is up
        self.reconnects = 0
        # Notifying is one statement outside any transaction, on a small pool of its own.
        self.notifier = create_engine(
            engine.url, pool_size=2, max_overflow=2, isolation_level="AUTOCOMMIT"
        )
        self.dsn = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        # The dispatcher reads the events on a connection of its own, without a thread: the
        # app's few threads are for requests (docs/configuration.md, THREADPOOL_SIZE).
        self._reader: psycopg.AsyncConnection[Any] | None = None

    async def start(self) -> None:
        await super().start()
        self._need_last_id = False
        try:
            self.last_id = await asyncio.to_thread(last_event_id, self.engine)
        except Exception:  # the database is away: the app still starts (and answers 503)
            log.warning("the event table is unreachable at start; reading it once connected")
            self._need_last_id = True
        self.listening = asyncio.Event()
        self._tasks.append(asyncio.create_task(self._listen()))
        self._sending = True
        self._sender = threading.Thread(target=self._send_batches, name="notify", daemon=True)
        self._sender.start()

    async def stop(self) -> None:
        self._sending = False
        self._batch_ready.set()
        if self._sender is not None:
            await asyncio.to_thread(self._sender.join, 5)
            self._sender = None
        await super().stop()
        self.notifier.dispose()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader.close()
            self._reader = None

    def close(self) -> None:
        """The NOTIFY pool: a process that never started the broker (an operator command, a job
        worker) still notified through it, synchronously."""
        self.notifier.dispose()

    async def _read(self, ids: list[int]) -> list[EventRow]:
        try:
            return await self._read_once(ids)
        except psycopg.OperationalError:
            # A connection that died with a database restart looks open until it is used:
            # once more on a fresh one (the next failure is the caller's).
            return await self._read_once(ids)

    async def _read_once(self, ids: list[int]) -> list[EventRow]:
        if self._reader is None or self._reader.closed:
            self._reader = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        try:
            cursor = await self._reader.execute(
                "SELECT id, room_code, kind, data FROM event WHERE id = ANY(%s) ORDER BY id",
                (ids,),
            )
            return [EventRow(*row) for row in await cursor.fetchall()]
        except psycopg.Error:
            await self._reader.close()
            raise

    def publish(self, ids: list[int]) -> None:
        if not ids:
            return
        if not self._sending:
            self._notify(list(ids))
            return
        with self._batch_lock:
            self._batch.extend(ids)
        self._batch_ready.set()

    def _send_batches(self) -> None:
        """The sender thread: one NOTIFY for the ids published in each ``BATCH_S``."""
        while self._sending or self._batch:
            self._batch_ready.wait()
            if self._sending:
                time.sleep(BATCH_S)  # let the other commits of this moment join the batch
            with self._batch_lock:
                ids, self._batch = self._batch, []
                self._batch_ready.clear()
            if ids:
                self._notify(ids)

    def _notify(self, ids: list[int]) -> None:
        try:
            with self.notifier.connect() as db:
                for at in range(0, len(ids), NOTIFY_IDS):
                    payload = ",".join(map(str, ids[at : at + NOTIFY_IDS]))
                    db.execute(
                        text("SELECT pg_notify(:channel, :payload)"),
                        {"channel": CHANNEL, "payload": payload},
                    )
                    self.notifies += 1
        except Exception:  # the change is committed; clients catch up from the table
            log.exception("NOTIFY failed")

    async def _listen(self) -> None:
        first = True
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.dsn, autocommit=True, application_name=LISTENER_NAME
                )
            except psycopg.OperationalError:
                await asyncio.sleep(self.retry_s)
                continue
            try:
                async with conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    await conn.execute(f"LISTEN {PLAYERS_CHANNEL}")
                    # Heard from now on; what changed before (or while away) is forgotten.
                    # Only if the trigger that tells is there (a database not yet migrated
                    # to 0015 announces nothing: the watchers keep their short lifetimes).
                    if await _announces_players(conn):
                        self._players_live(True)
                    if self._need_last_id:
                        self.last_id = await asyncio.to_thread(last_event_id, self.engine)
                        self._need_last_id = False
                    self.listening.set()
                    if not first:
                        # Notifications sent while we were away are lost: read the rows.
                        self.reconnects += 1
                        await self._catch_up()
                    first = False
                    pending = self._pending
                    assert pending is not None
                    async for note in conn.notifies():
                        if note.channel == PLAYERS_CHANNEL:
                            self._players_changed([note.payload])
                            continue
                        # On the loop: no self-pipe. A batch: "<id>,<id>,…".
                        pending.put_nowait([int(i) for i in note.payload.split(",") if i])
            except Exception as exc:  # whatever it was, listening must go on
                log.warning("the LISTEN connection dropped (%s); reconnecting", summary(exc))
            finally:
                self.listening.clear()
                self._players_live(False)
            await asyncio.sleep(self.retry_s)

    def _players_live(self, live: bool) -> None:
        for _, told in self._player_watchers:
            told(live)

    def _players_changed(self, player_ids: list[str]) -> None:
        for changed, _ in self._player_watchers:
            changed(player_ids)

    async def _catch_up(self) -> None:
        if not self.rooms:
            return
        rows = await asyncio.to_thread(read_events_after, self.engine, self.last_id)
        await self.deliver(rows)


async def _announces_players(conn: psycopg.AsyncConnection[Any]) -> bool:
    cursor = await conn.execute(
        "SELECT 1 FROM pg_trigger WHERE tgname = 'ph_player_changed' AND NOT tgisinternal"
    )
    if await cursor.fetchone() is not None:
        return True
    log.warning(
        "no trigger announces player changes (migration 0015 not run): sessions and tokens "
        "are read again every few seconds, and revocations take that long to reach every worker"
    )
    return False


def make_broker(engine: Engine) -> InProcessBroker:
    if engine.dialect.name == "postgresql":
        return PostgresBroker(engine)
    return InProcessBroker(engine)
