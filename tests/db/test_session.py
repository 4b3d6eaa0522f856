"""Engines and sessions (app/db/session.py): SQLite's pragmas and write lock, PostgreSQL's
fixed pools and time limits, the move path's own pool, and the check of an idle connection."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import QueuePool

from app.db.session import (
    Limits,
    idle_connection_is_dead,
    make_engine,
    make_inline_move_engine,
    make_move_engine,
    make_sessionmaker,
)
from tests.databases import require_postgres

LIMITS = Limits(
    pool_timeout_ms=2500, statement_timeout_ms=4000, lock_timeout_ms=300, move_lock_timeout_ms=70
)


@pytest.fixture()
def sqlite(tmp_path: Path) -> Iterator[Engine]:
    # A lock wait of 50 ms: a test that meets the lock fails fast (it never waits it out).
    engine = make_engine(
        f"sqlite:///{tmp_path / 'deep' / 'er' / 'hall.db'}", limits=Limits(lock_timeout_ms=50)
    )
    yield engine
    engine.dispose()


def test_sqlite_makes_its_folder_and_sets_its_pragmas(sqlite: Engine, tmp_path: Path) -> None:
    with sqlite.connect() as db:
        assert db.scalar(text("PRAGMA foreign_keys")) == 1
        assert db.scalar(text("PRAGMA journal_mode")) == "wal"
        assert db.scalar(text("PRAGMA synchronous")) == 1  # NORMAL
    assert (tmp_path / "deep" / "er" / "hall.db").exists()


def test_a_sqlite_transaction_takes_the_write_lock_at_its_start(sqlite: Engine) -> None:
    with sqlite.begin() as db:
        db.execute(text("CREATE TABLE t (x INTEGER)"))
    with sqlite.connect() as first, sqlite.connect() as second:
        first.begin()
        first.execute(text("SELECT count(*) FROM t"))  # a read only, yet it holds the lock
        with pytest.raises(OperationalError, match="database is locked"):
            second.begin()  # BEGIN IMMEDIATE: no interleaving of two moves' read and write
        first.rollback()
        second.rollback()
        with second.begin():
            second.execute(text("INSERT INTO t VALUES (1)"))


def test_sqlite_moves_share_the_engine_and_have_no_inline_pool(sqlite: Engine) -> None:
    assert make_move_engine(sqlite) is sqlite
    assert make_inline_move_engine(sqlite) is None


def test_an_in_memory_sqlite_database_needs_no_folder() -> None:
    engine = make_engine("sqlite:///:memory:")
    try:
        with engine.connect() as db:
            assert db.scalar(text("SELECT 1")) == 1
    finally:
        engine.dispose()


def test_postgresql_gets_a_fixed_pool_with_the_limits() -> None:
    engine = make_engine("postgresql+psycopg://ph@db.invalid/hall", pool_size=7, limits=LIMITS)
    try:
        pool = engine.pool
        assert isinstance(pool, QueuePool)
        assert pool.size() == 7 and pool._max_overflow == 0  # no connections come and go
        assert pool._timeout == 2.5
        moves = make_move_engine(engine, pool_size=3)
        assert moves is not engine and isinstance(moves.pool, QueuePool)
        assert moves.pool.size() == 3
        assert moves.url == engine.url
        default = make_move_engine(engine).pool
        assert isinstance(default, QueuePool) and default.size() == 7  # the main pool's size
        inline = make_inline_move_engine(engine)
        assert inline is not None and inline.url.drivername == "postgresql+psycopg_async"
        moves.dispose()
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_postgresql_connections_carry_the_time_limits() -> None:
    engine = make_engine(require_postgres(), pool_size=1, limits=LIMITS)
    moves = make_move_engine(engine)
    try:
        with engine.connect() as db:
            assert db.scalar(text("SHOW statement_timeout")) == "4s"
            assert db.scalar(text("SHOW lock_timeout")) == "300ms"
        with moves.connect() as db:
            # The move path waits for a game's row lock only briefly, in autocommit.
            assert db.scalar(text("SHOW lock_timeout")) == "70ms"
            assert db.scalar(text("SHOW statement_timeout")) == "4s"
            driver = db.connection.driver_connection
            assert driver is not None and driver.autocommit
    finally:
        moves.dispose()
        engine.dispose()


class _Socketed:
    def __init__(self, fd: int) -> None:
        self.closed = False
        self.broken = False
        self.pgconn = type("PGconn", (), {"socket": fd})()


def test_an_idle_connection_with_something_to_read_is_dead() -> None:
    ours, servers = socket.socketpair()
    with ours, servers:
        connection = _Socketed(ours.fileno())
        assert not idle_connection_is_dead(connection)  # a healthy idle one has nothing to say
        servers.sendall(b"E FATAL: terminating connection due to administrator command")
        assert idle_connection_is_dead(connection)


def test_an_idle_connection_whose_peer_hung_up_is_dead() -> None:
    ours, servers = socket.socketpair()
    with ours:
        servers.close()
        assert idle_connection_is_dead(_Socketed(ours.fileno()))


def test_a_closed_broken_or_socketless_connection_is_dead() -> None:
    ours, servers = socket.socketpair()
    with ours, servers:
        closed, broken = _Socketed(ours.fileno()), _Socketed(ours.fileno())
        closed.closed = True
        broken.broken = True
        assert idle_connection_is_dead(closed) and idle_connection_is_dead(broken)

    class NoSocket:
        closed = broken = False

        @property
        def pgconn(self) -> Any:
            raise RuntimeError("the connection is closed")

    assert idle_connection_is_dead(NoSocket())


def test_an_async_drivers_connection_is_checked_through_its_adapter() -> None:
    ours, servers = socket.socketpair()
    with ours, servers:

        class Adapter:
            driver_connection = _Socketed(ours.fileno())

        assert not idle_connection_is_dead(Adapter())
        servers.sendall(b"bye")
        assert idle_connection_is_dead(Adapter())


def test_sessions_keep_their_objects_loaded_after_commit(sqlite: Engine) -> None:
    sessions = make_sessionmaker(sqlite)
    with sessions() as session:
        assert session.bind is sqlite
        assert session.expire_on_commit is False
