"""Which database errors mean "unavailable for now" (answered 503), and which are a lost
connection (the move path retries those once, before its COMMIT was sent)."""

from __future__ import annotations

import sqlite3

import psycopg
from sqlalchemy import exc as sa


class Disconnected(Exception):
    """The connection died before the transaction's COMMIT was sent: nothing was applied."""


class OutcomeUnknown(Exception):
    """The connection died while the COMMIT was on its way: it may or may not have happened."""


# Refused, shut down, starting up, terminated, timed out (statement, lock, pool), too many
# connections, SQLite's "database is locked" or "unable to open": all OperationalError.
UNAVAILABLE_ERRORS = (
    sa.OperationalError,
    sa.InterfaceError,
    sa.TimeoutError,
    sa.DisconnectionError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    sqlite3.OperationalError,
    Disconnected,
    OutcomeUnknown,
)


def is_unavailable(error: BaseException) -> bool:
    if isinstance(error, UNAVAILABLE_ERRORS):
        return True
    return isinstance(error, sa.DBAPIError) and error.connection_invalidated


def is_disconnect(error: BaseException) -> bool:
    """A connection that died under the app (not a refusal or a timeout)."""
    if isinstance(error, Disconnected | sa.DisconnectionError):
        return True
    return isinstance(error, sa.DBAPIError) and error.connection_invalidated


def summary(error: BaseException) -> str:
    """One line for the log: the innermost error's class and the first line of its message."""
    inner = getattr(error, "orig", None) or error.__cause__ or error
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[0] if text else ''}"[:300]
