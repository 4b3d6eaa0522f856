"""Database engines and sessions for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str, pool_size: int = 10) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        _sqlite_transactions_take_the_write_lock(engine)
        return engine
    # A fixed pool: connections that come and go under load (overflow) cost PostgreSQL a process
    # fork each, more than the moves themselves. No pre-ping either: it would add a round trip
    # to every checkout; recycling and the pool's invalidation on a failed statement handle a
    # restarted server instead.
    return create_engine(url, pool_size=pool_size, max_overflow=0, pool_recycle=1800)


def make_move_engine(engine: Engine) -> Engine:
    """The connections that moves' transactions run on (app/services/game_rows.py).

    On PostgreSQL, a pool of its own, in autocommit, where the app prepares its statements
    itself and psycopg prepares none: psycopg deallocates *every* prepared statement of a
    connection whenever a transaction on it rolls back (as reading a game does), which would
    drop the move path's statements in a shared pool. Elsewhere, the same engine.
    """
    if engine.dialect.name != "postgresql" or engine.dialect.driver != "psycopg":
        return engine
    return create_engine(
        engine.url,
        pool_size=engine.pool.size(),  # type: ignore[attr-defined]
        max_overflow=0,
        pool_recycle=1800,
        isolation_level="AUTOCOMMIT",
        connect_args={"prepare_threshold": None},
    )


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


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    with factory.begin() as session:
        yield session
