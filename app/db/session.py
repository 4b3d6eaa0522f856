"""Database engines and sessions for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

import select
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.orm import Session, sessionmaker


@dataclass(frozen=True)
class Limits:
    """How long the app waits on the database (docs/operating.md, "Faults"); 0: no limit.

    ``pool_timeout_ms`` bounds the wait for a pooled connection (then SQLAlchemy's
    ``TimeoutError``, answered 503); the other two are PostgreSQL's ``statement_timeout`` and
    ``lock_timeout`` of every connection (SQLite waits ``lock_timeout_ms`` for its write lock).
    """

    pool_timeout_ms: int = 30_000
    statement_timeout_ms: int = 0
    lock_timeout_ms: int = 0
    # The move path's own pool: a move waits this long at most for its game's row lock. Moves
    # of one game hold it for milliseconds; a longer wait means the row is held elsewhere, and
    # every moment spent waiting holds one of the worker's few threads.
    move_lock_timeout_ms: int = 0


NO_LIMITS = Limits()
_LIMITS: weakref.WeakKeyDictionary[Engine, Limits] = weakref.WeakKeyDictionary()


def make_engine(url: str, pool_size: int = 10, limits: Limits = NO_LIMITS) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        busy = limits.lock_timeout_ms / 1000 if limits.lock_timeout_ms else 30
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": busy})
        _sqlite_transactions_take_the_write_lock(engine)
        _LIMITS[engine] = limits
        return engine
    # A fixed pool: connections that come and go under load (overflow) cost PostgreSQL a process
    # fork each, more than the moves themselves. No pre-ping either: it would add a round trip
    # to every checkout; a check of the idle socket at checkout (no round trip) drops the
    # connections a restarted server closed, and the move path retries once on a disconnect.
    engine = create_engine(url, **_postgres_options(pool_size, limits))
    _checkout_check(engine)
    _LIMITS[engine] = limits
    return engine


def _postgres_options(pool_size: int, limits: Limits, **extra: Any) -> dict[str, Any]:
    options = [
        f"-c statement_timeout={limits.statement_timeout_ms}",
        f"-c lock_timeout={limits.lock_timeout_ms}",
    ]
    connect_args: dict[str, Any] = {"options": " ".join(options), "connect_timeout": 5}
    connect_args.update(extra.pop("connect_args", {}))
    engine_options: dict[str, Any] = {
        "pool_size": pool_size,
        "max_overflow": 0,
        "pool_recycle": 1800,
        "pool_timeout": limits.pool_timeout_ms / 1000,
        "connect_args": connect_args,
        **extra,
    }
    return engine_options


def _is_psycopg_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg"


def make_move_engine(engine: Engine, pool_size: int | None = None) -> Engine:
    """The connections that moves' transactions run on (app/db/move_store.py).

    On PostgreSQL, a pool of its own, in autocommit, where the app prepares its statements
    itself and psycopg prepares none: psycopg deallocates *every* prepared statement of a
    connection whenever a transaction on it rolls back (as reading a game does), which would
    drop the move path's statements in a shared pool. Elsewhere, the same engine.
    ``pool_size``: its size, when not the main pool's.
    """
    if not _is_psycopg_postgres(engine):
        return engine
    for_moves, options = _move_options(engine)
    if pool_size is not None:
        options["pool_size"] = pool_size
    moves = create_engine(engine.url, **options)
    _checkout_check(moves)
    _LIMITS[moves] = for_moves
    return moves


def make_inline_move_engine(engine: Engine) -> AsyncEngine | None:
    """The move path's connections on the event loop (``app.db.move_store.InlineMoves``): the
    same pool as :func:`make_move_engine`'s (autocommit, no psycopg-prepared statements, the
    move lock timeout), on psycopg's ``AsyncConnection``, so that a move waits for PostgreSQL
    without a thread. None where there is none (SQLite: its moves stay in the thread pool).
    """
    if not _is_psycopg_postgres(engine):
        return None
    for_moves, options = _move_options(engine)
    moves = create_async_engine(engine.url.set(drivername="postgresql+psycopg_async"), **options)
    _checkout_check(moves.sync_engine)
    _LIMITS[moves.sync_engine] = for_moves
    return moves


def _move_options(engine: Engine) -> tuple[Limits, dict[str, Any]]:
    limits = _LIMITS.get(engine, NO_LIMITS)
    for_moves = replace(limits, lock_timeout_ms=limits.move_lock_timeout_ms)
    options = _postgres_options(
        engine.pool.size(),  # type: ignore[attr-defined]
        for_moves,
        isolation_level="AUTOCOMMIT",
        connect_args={"prepare_threshold": None},
        # No ROLLBACK as a connection goes back to the pool: in autocommit, only a move's own
        # BEGIN opens a transaction, and the move path ends it itself (rolled back if left open,
        # the connection invalidated if lost: ``app.db.move_store.postgres_transactions``). The
        # pool's reset was a driver call and a switch of greenlets on every move.
        pool_reset_on_return=None,
    )
    return for_moves, options


def idle_connection_is_dead(dbapi_connection: Any) -> bool:
    """Whether a pooled PostgreSQL connection was closed by the server while it sat idle.

    A server that shuts down or terminates a backend sends it a FATAL message and closes the
    socket, so an idle connection with something to read is dead (a healthy idle one has
    nothing to say). One ``poll`` system call, no round trip.
    """
    # SQLAlchemy's adapter of an async driver holds the driver's connection (the socket).
    dbapi_connection = getattr(dbapi_connection, "driver_connection", dbapi_connection)
    if getattr(dbapi_connection, "closed", False) or getattr(dbapi_connection, "broken", False):
        return True
    try:
        fd = dbapi_connection.pgconn.socket
    except Exception:  # no socket: closed
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


def _checkout_check(engine: Engine) -> None:
    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if idle_connection_is_dead(dbapi_connection):
            # The pool discards this connection and checks out (or opens) another.
            raise DisconnectionError("the server closed this pooled connection")


def _sqlite_transactions_take_the_write_lock(engine: Engine) -> None:
    """SQLite has no SELECT … FOR UPDATE; BEGIN IMMEDIATE serializes writers instead, so that
    reading a game's version and writing the next one cannot interleave with another move."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let SQLAlchemy's BEGIN below take over
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
