"""The move path's statements on PostgreSQL, prepared once per connection and sent several to
a message (app/db/move_store.py runs them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sqlalchemy import Connection, Dialect
from sqlalchemy.sql import ClauseElement

from app.db.broker import CHANNEL
from app.db.game_rows import (
    FIRST_RESPONSE,
    INSERT_EVENT,
    INSERT_MOVE,
    LOCK_GAME,
    MOVE,
    MUTABLE,
    UPDATE_GAME,
)


def as_is(result: Any) -> Any:
    """A synchronous driver call's result, as it comes (the async path awaits instead)."""
    return result


@dataclass(frozen=True)
class Prepared:
    """A statement prepared once per connection (``PREPARE``), then run by name: PostgreSQL
    plans the locking join of every move once instead of each time (~150 µs of its CPU)."""

    name: str
    prepare: str  # PREPARE name AS … with $1, $2, …
    execute: str  # EXECUTE name(%(param)s, …), bound client-side

    @classmethod
    def of(cls, name: str, statement: ClauseElement, dialect: Dialect) -> Prepared:
        compiled = statement.compile(dialect=dialect)
        names = list(compiled.params)
        # The compiled text uses pyformat placeholders (and %% for a literal %): formatting it
        # with numbered placeholders gives the body of PREPARE.
        body = str(compiled) % {n: f"${i}" for i, n in enumerate(names, 1)}
        arguments = ", ".join(f"%({n})s" for n in names)
        return cls(name, f"PREPARE {name} AS {body}", f"EXECUTE {name}({arguments})")


@dataclass(frozen=True)
class PostgresStatements:
    lock_game: Prepared
    first_response: Prepared
    update_game: Prepared
    insert_move: Prepared
    insert_event: Prepared

    @classmethod
    def compile(cls, dialect: Dialect) -> PostgresStatements:
        # The two write statements share one parameter dict: their names must not clash
        # with a different meaning (game_id is the same game in both).
        shared = set(MUTABLE) & {c.key for c in MOVE.c}
        assert not shared, shared
        return cls(
            Prepared.of("ph_lock_game", LOCK_GAME, dialect),
            Prepared.of("ph_first_response", FIRST_RESPONSE, dialect),
            Prepared.of("ph_update_game", UPDATE_GAME, dialect),
            Prepared.of("ph_insert_move", INSERT_MOVE, dialect),
            Prepared.of("ph_insert_event", INSERT_EVENT, dialect),
        )

    # Built once, used by every move.
    @cached_property
    def begin_and_lock(self) -> str:
        return f"BEGIN; {self.lock_game.execute}"

    @cached_property
    def write_and_commit(self) -> str:
        return f"{self.update_game.execute}; {self.insert_move.execute}; COMMIT"

    @cached_property
    def write_event_commit_notify(self) -> str:
        # lastval(): the id the event's INSERT just drew, still this session's after COMMIT.
        return (
            f"{self.update_game.execute}; {self.insert_move.execute}; "
            f"{self.insert_event.execute}; COMMIT; "
            f"SELECT pg_notify('{CHANNEL}', lastval()::text)"
        )

    def prepare_once(self, db: Connection, io: Callable[[Any], Any] = as_is) -> None:
        """Prepares the statements on this connection the first time it serves a move; they
        last as long as the connection (its pool's info dict starts empty on a reconnect).
        ``io`` waits for the driver's calls (:func:`driver_io`)."""
        info = db.connection.info
        if info.get("ph_prepared"):
            return
        driver = db.connection.driver_connection
        assert driver is not None
        statements = (
            self.lock_game,
            self.first_response,
            self.update_game,
            self.insert_move,
            self.insert_event,
        )
        for statement in statements:
            io(driver.execute(statement.prepare))
        info["ph_prepared"] = True
