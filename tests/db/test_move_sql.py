"""The move path's statements on PostgreSQL (app/db/move_sql.py): PREPARE texts built from the
SQLAlchemy statements, the messages that send several at once, and preparing once per
connection. The move path that runs them: test_move_store.py."""

from __future__ import annotations

import os
import re
from typing import Any, cast

import psycopg
import pytest
from sqlalchemy import Connection, bindparam, create_engine, literal_column, select, text
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg

from app.db.broker import CHANNEL
from app.db.game_rows import LOCK_GAME, MUTABLE, UPDATE_GAME
from app.db.models import Base, Player
from app.db.move_sql import PostgresStatements, Prepared, as_is
from tests.databases import fresh_postgres_database

DIALECT = PGDialect_psycopg()  # type: ignore[no-untyped-call]
NAMES = ["ph_lock_game", "ph_first_response", "ph_update_game", "ph_insert_move", "ph_insert_event"]


def test_a_prepared_statement_numbers_its_parameters_and_names_them_when_run() -> None:
    lock = Prepared.of("ph_lock", LOCK_GAME, DIALECT)
    assert lock.name == "ph_lock"
    assert lock.prepare.startswith("PREPARE ph_lock AS SELECT game.id, ")
    assert "WHERE game.id = $1::VARCHAR FOR UPDATE OF game" in lock.prepare
    assert lock.execute == "EXECUTE ph_lock(%(game_id)s)"


def test_the_update_takes_every_mutable_column_in_order_of_its_numbers() -> None:
    update = Prepared.of("u", UPDATE_GAME, DIALECT)
    arguments = re.fullmatch(r"EXECUTE u\((.*)\)", update.execute)
    assert arguments is not None
    names = re.findall(r"%\((\w+)\)s", arguments.group(1))
    assert sorted(names) == sorted([*MUTABLE, "game_id"])
    numbers = [int(n) for n in re.findall(r"\$(\d+)", update.prepare)]
    assert sorted(numbers) == list(range(1, len(names) + 1))
    # $i in the body is the i-th argument of EXECUTE: game_id's number is in the WHERE.
    where = re.search(r"WHERE game\.id = \$(\d+)", update.prepare)
    assert where is not None and names[int(where.group(1)) - 1] == "game_id"


def test_a_literal_percent_sign_is_kept_as_one() -> None:
    query = select(Player.id).where(
        Player.name.like(literal_column("'a%'")), Player.id == bindparam("pid")
    )
    prepared = Prepared.of("q", query, DIALECT)
    assert "LIKE 'a%' AND player.id = $1" in prepared.prepare
    assert prepared.execute == "EXECUTE q(%(pid)s)"


def test_the_messages_chain_the_statements_of_a_move() -> None:
    statements = PostgresStatements.compile(DIALECT)
    prepared = [
        statements.lock_game,
        statements.first_response,
        statements.update_game,
        statements.insert_move,
        statements.insert_event,
    ]
    assert [p.name for p in prepared] == NAMES
    lock, _, update, insert_move, insert_event = (p.execute for p in prepared)
    assert statements.begin_and_lock == f"BEGIN; {lock}"
    assert statements.write_and_commit == f"{update}; {insert_move}; COMMIT"
    # A race's progress: its event in the same transaction, announced after the COMMIT.
    assert statements.write_event_commit_notify == (
        f"{update}; {insert_move}; {insert_event}; COMMIT; "
        f"SELECT pg_notify('{CHANNEL}', lastval()::text)"
    )
    assert statements.begin_and_lock is statements.begin_and_lock  # built once


class _Driver:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def execute(self, query: str) -> str:
        self.sent.append(query)
        return f"done {query.split()[1]}"


class _Pooled:
    def __init__(self) -> None:
        self.info: dict[str, Any] = {}
        self.driver_connection = _Driver()


class _Connection:
    def __init__(self) -> None:
        self.connection = _Pooled()


def test_statements_are_prepared_once_per_connection() -> None:
    statements = PostgresStatements.compile(DIALECT)
    db = _Connection()
    waited: list[str] = []

    def io(result: str) -> None:
        waited.append(result)

    statements.prepare_once(cast(Connection, db), io)
    sent = db.connection.driver_connection.sent
    assert [q.split()[1] for q in sent] == NAMES and all(q.startswith("PREPARE ") for q in sent)
    assert waited == [f"done {name}" for name in NAMES]  # each driver call awaited
    statements.prepare_once(cast(Connection, db), io)
    assert len(sent) == len(NAMES)  # the same connection: nothing again
    db.connection.info.clear()  # what a reconnection gives: a fresh pool record
    statements.prepare_once(cast(Connection, db))
    assert len(sent) == 2 * len(NAMES)
    assert as_is(sent) is sent


@pytest.mark.postgres
def test_the_statements_prepare_and_run_on_postgresql() -> None:
    url = fresh_postgres_database(f"ph_move_sql_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        Base.metadata.create_all(engine)  # the models' schema: the migrations' (test_migrations)
        statements = PostgresStatements.compile(engine.dialect)
        with engine.connect() as db:
            statements.prepare_once(db)
            statements.prepare_once(db)  # a second PREPARE of a name would be an error
            prepared = db.execute(text("SELECT name FROM pg_prepared_statements")).scalars()
            assert sorted(prepared) == sorted(NAMES)
            driver = db.connection.driver_connection
            assert isinstance(driver, psycopg.Connection)
            # Bound client-side, as the move path binds them (app/db/move_store.py).
            with psycopg.ClientCursor(driver) as cursor:
                cursor.execute(statements.lock_game.execute, {"game_id": "none"})
                assert cursor.fetchall() == []
    finally:
        engine.dispose()
