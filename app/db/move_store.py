"""The transaction that changes a game, on the statements of app/db/game_rows.py.

:class:`MoveStore` is what the app builds once (``create_app``) and hands to the game service:
the move path's connection pool and how a change runs on it. Moves, undos and resigns all go
through it.

A move is one short transaction: lock the game row, read it, write the new row and append to
the move log. :func:`move_transactions` picks one of two ways to run it, with the same
statements and the same behaviour (the contract tests run on both databases):

- :class:`CoreTransaction` (any database; the embedded SQLite): SQLAlchemy Core in a transaction
  SQLAlchemy begins; on SQLite ``BEGIN IMMEDIATE`` takes the write lock.
- :class:`PostgresTransaction`: two round trips instead of five. The connection is in autocommit
  and the statements open and close the transaction themselves, sent with client-side
  parameter binding (psycopg's ``ClientCursor``, which quotes every value as a literal) so that
  several travel in one message: ``BEGIN; SELECT … FOR UPDATE`` and ``UPDATE …; INSERT …;
  COMMIT``. On this machine a round trip costs the server process ~80 µs of CPU whatever the
  statement, and the five of them were the largest part of a move (bench/RESULTS.md).

Either way the transaction's :attr:`~MoveTransaction.db` is a SQLAlchemy connection inside the
same transaction, for the statistics counters and the move log.

On PostgreSQL the store also runs moves on the event loop (:class:`InlineMoves`, issue 26): the
same transactions, statements and service code, on psycopg's ``AsyncConnection`` through
SQLAlchemy's asyncio extension, run by ``greenlet_spawn`` so that every wait for the database is
an ``await`` and the rules engine's microseconds run inline; no thread-pool hop per move.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg import AsyncClientCursor, ClientCursor
from psycopg.pq import TransactionStatus
from sqlalchemy import Connection, Engine, Executable, Row
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.util import await_, greenlet_spawn

from app.db.faults import Disconnected, OutcomeUnknown
from app.db.game_rows import (
    EVENT,
    FIRST_RESPONSE,
    INSERT_EVENT,
    INSERT_MOVE,
    LOCK_GAME,
    LOCKED_COLUMNS,
    TIMES,
    UPDATE_GAME,
    LockedGame,
    NewEvent,
    locked_game,
)
from app.db.models import as_utc
from app.db.move_sql import PostgresStatements, as_is
from app.db.session import make_inline_move_engine, make_move_engine

T = TypeVar("T")


class MoveTransaction(Protocol):
    @property
    def db(self) -> Connection:
        """SQLAlchemy, inside this transaction (statistics counters, the move log)."""

    def lock(self, game_id: str, idempotency_key: str | None) -> LockedGame | None:
        """The game, locked until the end of the transaction; None if there is no such game."""

    def write(
        self, game: dict[str, Any], move: dict[str, Any], event: NewEvent | None = None
    ) -> int | None:
        """Save the game and its new move-log entry (and a race's progress event), and commit.
        Returns the event's id for the caller to publish after the commit, or None when there
        is nothing left to publish."""


class CoreTransaction:
    def __init__(self, db: Connection) -> None:
        self.db = db

    def lock(self, game_id: str, idempotency_key: str | None) -> LockedGame | None:
        found = self.db.execute(LOCK_GAME, {"game_id": game_id}).first()
        if found is None:
            return None
        first = None
        if idempotency_key is not None:
            params = {"game_id": game_id, "key": idempotency_key}
            first = self.db.execute(FIRST_RESPONSE, params).first()
        return locked_game(dict(found._mapping), first)

    def write(
        self, game: dict[str, Any], move: dict[str, Any], event: NewEvent | None = None
    ) -> int | None:
        self.db.execute(UPDATE_GAME, game)
        self.db.execute(INSERT_MOVE, move)
        event_id = None
        if event is not None:
            event_id = int(
                self.db.execute(INSERT_EVENT.returning(EVENT.c.id), event.values()).scalar_one()
            )
        try:
            self.db.commit()
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise OutcomeUnknown(str(exc.orig)) from exc
            raise
        return event_id


def driver_io(driver: Any) -> tuple[Callable[[Any], Any], Any]:
    """How to wait for the driver's calls, and a client-side-binding cursor on it.

    psycopg's synchronous connection returns results; its ``AsyncConnection`` (the move path
    on the event loop, :class:`InlineMoves`) returns coroutines, awaited here through
    SQLAlchemy's ``await_`` from inside the greenlet that ``greenlet_spawn`` runs the move in:
    the same statements and the same code, without a thread.
    """
    if isinstance(driver, psycopg.AsyncConnection):
        return await_, AsyncClientCursor(driver)
    return as_is, ClientCursor(driver)


def locked_from_row(found: Any, first: Any) -> LockedGame:
    """The locked game from the driver's row of :data:`LOCK_GAME` (and the key's first answer,
    if any), its times as the UTCDateTime column type hands them back."""
    values = dict(zip(LOCKED_COLUMNS, found, strict=True))
    for name in TIMES:
        values[name] = as_utc(values[name])
    return locked_game(values, first)


class PostgresTransaction:
    def __init__(self, db: Connection, sql: PostgresStatements) -> None:
        self.db = db
        self.sql = sql
        driver = db.connection.driver_connection
        assert driver is not None and driver.autocommit and driver.prepare_threshold is None, (
            "moves need the connections of make_move_engine()"
        )
        self.driver = driver
        # ``io`` waits for a driver call: as is (sync), or awaited on the event loop (async).
        # The cursor is made once per connection, as its statements are prepared once: making
        # one copies the connection's adapters, a measurable part of a move (bench/RESULTS.md,
        # issue 26). The pool empties ``info`` when it closes or replaces the connection.
        info = db.connection.info
        reused: tuple[Callable[[Any], Any], Any] | None = info.get("ph_driver_io")
        if reused is None:
            reused = info["ph_driver_io"] = driver_io(driver)
        self.io, self.cursor = reused
        with self._before_commit():
            sql.prepare_once(db, self.io)

    @contextmanager
    def _before_commit(self) -> Iterator[None]:
        try:
            yield
        except psycopg.Error as exc:
            if self.driver.broken or self.driver.closed:
                raise Disconnected(str(exc)) from exc
            raise

    def lock(self, game_id: str, idempotency_key: str | None) -> LockedGame | None:
        params: dict[str, Any] = {"game_id": game_id, "key": idempotency_key}
        query = self.sql.begin_and_lock
        if idempotency_key is not None:
            query += "; " + self.sql.first_response.execute
        cursor, io = self.cursor, self.io
        with self._before_commit():
            io(cursor.execute(query, params))
            cursor.nextset()  # past BEGIN
            found = io(cursor.fetchone())
            if found is None:
                return None
            first = None
            if idempotency_key is not None:
                cursor.nextset()
                first = io(cursor.fetchone())
        return locked_from_row(found, first)

    def write(
        self, game: dict[str, Any], move: dict[str, Any], event: NewEvent | None = None
    ) -> int | None:
        # A race's event goes in the same message, and its notification right after the COMMIT
        # (in a transaction of its own): still one round trip, and nothing is announced that
        # did not commit.
        if event is None:
            query, params = self.sql.write_and_commit, {**move, **game}
        else:
            query, params = self.sql.write_event_commit_notify, {**move, **game, **event.values()}
        try:
            self.io(self.cursor.execute(query, params))
        except psycopg.Error as exc:
            # The COMMIT travels in the same message: on a lost connection nobody knows
            # whether it ran. (Any other error aborted the transaction: nothing was applied.)
            if self.driver.broken or self.driver.closed:
                raise OutcomeUnknown(str(exc)) from exc
            raise
        return None

    @property
    def dead(self) -> bool:
        return bool(self.driver.broken or self.driver.closed)

    def end(self) -> None:
        """Roll back what a refused move left open (the lock and anything else)."""
        driver = self.cursor.connection
        if self.dead:
            return
        if driver.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            self.io(driver.execute("ROLLBACK"))


Transactions = Callable[[], AbstractContextManager[MoveTransaction]]


@dataclass
class InlineMoves:
    """Moves on the event loop: an ``AsyncEngine`` of the move path's own and the same
    :data:`Transactions` on its synchronous face, run by :meth:`run` in a greenlet.

    Its connections belong to the event loop that opened them, so it serves one loop: the one
    whose app lifespan called :meth:`start` (a worker's only loop in production). A request on
    any other loop (a test client without the app's lifespan) is told :meth:`here` is False and
    takes the thread-pool path, with the same transactions on the synchronous pool.
    """

    engine: AsyncEngine
    transaction: Transactions
    loop: asyncio.AbstractEventLoop | None = field(default=None)

    @classmethod
    def of(cls, engine: AsyncEngine) -> InlineMoves:
        return cls(engine, move_transactions(engine.sync_engine))

    def start(self) -> None:
        """Serve the running loop (the app's lifespan, as it starts)."""
        self.loop = asyncio.get_running_loop()

    async def stop(self) -> None:
        """Close the connections, on the loop that opened them (the lifespan, as it ends)."""
        self.loop = None
        await self.engine.dispose()

    def here(self) -> bool:
        """Whether moves of the running loop may run here."""
        return self.loop is not None and asyncio.get_running_loop() is self.loop

    async def read(self, statement: Executable, params: dict[str, Any]) -> Row[Any] | None:
        """The first row of a read on this loop's connections (autocommit: there is no
        transaction to end), for a move route's dependency (the browser's session check)."""
        async with self.engine.connect() as db:
            return (await db.execute(statement, params)).first()

    async def run(self, work: Callable[[Transactions], T]) -> T:
        """``work(transactions)`` on this loop: its database calls are awaited through
        SQLAlchemy's ``await_``, everything else runs inline.

        Shielded from cancellation, as a move in a thread was (nobody can stop a thread half
        way): a cancelled request (uvicorn cancels what is left at the end of a graceful
        shutdown) leaves its move to finish in a task of its own, so a transaction is never
        cut between two statements or under its COMMIT, and a retry with the same
        Idempotency-Key gets its answer. ``asyncio.shield`` rather than a shielded cancel
        scope: it holds against a task's plain ``cancel()`` too.
        """
        task = asyncio.ensure_future(greenlet_spawn(work, self.transaction))
        task.add_done_callback(_retrieved)
        return await asyncio.shield(task)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Takes a finished move's error, so that one whose request was cancelled meanwhile (and
    so answered to nobody) is not logged as "never retrieved"."""
    if not task.cancelled():
        task.exception()


@dataclass
class MoveStore:
    """The move path's connections (``engine``) and its transactions: built once per app by
    :meth:`open` and passed to the game service, which never sees the driver."""

    engine: Engine
    transaction: Transactions
    shared: bool  # ``engine`` is the app's main engine (SQLite): not this store's to close
    inline: InlineMoves | None = None  # on the event loop (PostgreSQL with psycopg)

    @classmethod
    def open(cls, engine: Engine, threads: int | None = None) -> MoveStore:
        """The store for the app's main ``engine``: on PostgreSQL a pool of its own
        (``make_move_engine``) and one on the event loop (``make_inline_move_engine``),
        elsewhere the same engine. ``threads``: how many threads may move at once (the
        thread pool's, THREADPOOL_SIZE), when the routes' moves run on the event loop: the
        synchronous pool then needs no more connections than they and the background sweeps
        (the event loop's pool takes the main pool's size)."""
        inline = make_inline_move_engine(engine)
        small = None if inline is None or threads is None else threads + 2
        moves = make_move_engine(engine, small)
        return cls(
            moves,
            move_transactions(moves),
            shared=moves is engine,
            inline=None if inline is None else InlineMoves.of(inline),
        )

    def inline_here(self) -> InlineMoves | None:
        """The event loop's move path, when the running loop has one (see :class:`InlineMoves`)."""
        inline = self.inline
        return inline if inline is not None and inline.here() else None

    def close(self) -> None:
        """Closes the connections of the move path's own pool, if it has one."""
        if not self.shared:
            self.engine.dispose()


def move_transactions(engine: Engine) -> Transactions:
    """How this database runs a move's transaction (see the module's docstring); ``engine``
    comes from ``app.db.session.make_move_engine``."""
    if engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg":
        return postgres_transactions(engine)
    return core_transactions(engine)


def postgres_transactions(engine: Engine) -> Transactions:
    statements = PostgresStatements.compile(engine.dialect)

    @contextmanager
    def postgres() -> Iterator[MoveTransaction]:
        with engine.connect() as db:
            tx: PostgresTransaction | None = None
            try:
                tx = PostgresTransaction(db, statements)
                yield tx
            finally:
                try:
                    driver = db.connection.driver_connection
                except SQLAlchemyError:
                    # A statement of the transaction lost the connection and SQLAlchemy has
                    # invalidated it: asking for it again raises, and that error would hide
                    # the one on its way out (a 500 instead of a retry or a 503).
                    driver = None
                if driver is None or driver.broken or driver.closed:
                    db.invalidate()  # the pool opens a new one in its place
                elif tx is not None:
                    tx.end()

    return postgres


def core_transactions(engine: Engine) -> Transactions:
    @contextmanager
    def core() -> Iterator[MoveTransaction]:
        with engine.begin() as db:
            yield CoreTransaction(db)

    return core
