"""Which database errors mean "unavailable for now", which a lost connection
(app/db/faults.py), and the one log line that sums an error up."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from sqlalchemy import exc as sa

from app.db.faults import (
    Disconnected,
    OutcomeUnknown,
    is_disconnect,
    is_unavailable,
    summary,
)


def _wrapped(orig: Exception, invalidated: bool = False) -> sa.DBAPIError:
    """What SQLAlchemy raises for a driver's error (``orig``)."""
    error = sa.DBAPIError.instance(
        "SELECT 1", {}, orig, sqlite3.Error, connection_invalidated=invalidated
    )
    assert isinstance(error, sa.DBAPIError)
    return error


@pytest.mark.parametrize(
    "error",
    [
        _wrapped(sqlite3.OperationalError("database is locked")),  # an sa.OperationalError
        sa.TimeoutError("QueuePool limit of size 10 overflow 0 reached"),
        sa.DisconnectionError("the server closed this pooled connection"),
        psycopg.OperationalError("connection refused"),
        psycopg.InterfaceError("the connection is closed"),
        sqlite3.OperationalError("unable to open database file"),
        Disconnected(),
        OutcomeUnknown(),
        _wrapped(sqlite3.DatabaseError("server closed the connection"), invalidated=True),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_of_a_database_that_is_away_are_unavailable(error: Exception) -> None:
    assert is_unavailable(error)


@pytest.mark.parametrize(
    "error",
    [
        _wrapped(sqlite3.IntegrityError("UNIQUE constraint failed: player.name_key")),
        _wrapped(sqlite3.ProgrammingError("no such table: game")),
        psycopg.errors.UniqueViolation("duplicate key"),
        ValueError("a bug"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_of_the_app_or_its_data_are_not(error: Exception) -> None:
    # A bug or a refusal to answer as such, never a 503.
    assert not is_unavailable(error)
    assert not is_disconnect(error)


def test_a_disconnect_is_a_connection_that_died_not_a_refusal_or_a_timeout() -> None:
    assert is_disconnect(Disconnected())
    assert is_disconnect(sa.DisconnectionError())
    assert is_disconnect(_wrapped(sqlite3.DatabaseError("terminated"), invalidated=True))
    # Unavailable, but not lost under the app: retrying the move would not help.
    assert not is_disconnect(sa.TimeoutError("pool"))
    assert not is_disconnect(psycopg.OperationalError("connection refused"))
    assert not is_disconnect(_wrapped(sqlite3.OperationalError("database is locked")))
    # The COMMIT may have happened: never retried as a disconnect.
    assert not is_disconnect(OutcomeUnknown())


def test_the_summary_is_the_innermost_errors_class_and_first_line() -> None:
    wrapped = _wrapped(sqlite3.OperationalError("database is locked\nmore detail"))
    assert summary(wrapped) == "OperationalError: database is locked"
    try:
        try:
            raise psycopg.OperationalError("connection refused\n\tIs the server running?")
        except psycopg.OperationalError as inner:
            raise RuntimeError("reading events failed") from inner
    except RuntimeError as outer:
        assert summary(outer) == "OperationalError: connection refused"
    assert summary(Disconnected()) == "Disconnected: "
    assert summary(ValueError("   ")) == "ValueError: "


def test_the_summary_is_one_bounded_line() -> None:
    line = summary(ValueError("x" * 1000 + "\nsecond line"))
    assert len(line) == 300 and "\n" not in line and line.startswith("ValueError: xxx")
