"""The move transaction (app/db/move_store.py, on the statements of app/db/game_rows.py): the
same behaviour on both databases, and on PostgreSQL two round trips of statements the app
prepared itself."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from app.db.move_store import CoreTransaction, PostgresStatements, PostgresTransaction
from tests.web.support import error_code, log_rows, move, start


def test_refused_moves_release_the_game_and_change_nothing(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    gid = game["id"]
    assert error_code(move(api, gid, "t1-t2", 0), 422) == "illegal_move"
    assert error_code(move(api, gid, "t5-t9", 7), 409) == "stale_version"
    assert log_rows(app, gid) == []
    # Each refusal rolled its transaction back: the game is not locked, and on PostgreSQL
    # the prepared statements outlived the rollbacks.
    played = move(api, gid, "t5-t9", 0)
    assert played.status_code == 200, played.text
    assert api.get(f"/api/games/{gid}").json()["version"] == 1  # a read, rolled back too
    again = move(api, gid, "t8-t10", 1)
    assert again.status_code == 200, again.text
    assert log_rows(app, gid) == [(1, "move", "t5-t9"), (2, "move", "t8-t10")]


def test_each_database_gets_its_own_way_of_moving(app: FastAPI, backend: str) -> None:
    with app.state.services.move_store.transaction() as tx:
        expected = PostgresTransaction if backend == "postgres" else CoreTransaction
        assert isinstance(tx, expected)


def _count_round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    sent: list[str] = []
    original: Callable[..., Any] = psycopg.ClientCursor.execute

    def counting(self: psycopg.ClientCursor[Any], query: str, *args: Any, **kw: Any) -> Any:
        sent.append(query.split("(")[0])
        return original(self, query, *args, **kw)

    monkeypatch.setattr(psycopg.ClientCursor, "execute", counting)
    return sent


def test_a_move_on_postgres_is_two_round_trips(
    api: TestClient, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend != "postgres":
        pytest.skip("the two-round-trip path is PostgreSQL's")
    game = start(api, "quadrangle", 1)
    sent = _count_round_trips(monkeypatch)
    lock, write = "BEGIN; EXECUTE ph_lock_game", "EXECUTE ph_update_game"
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    assert sent == [lock, write]

    sent.clear()
    key = {"Idempotency-Key": "retry-1"}
    first = move(api, game["id"], "t8-t10", 1, headers=key)
    retried = move(api, game["id"], "t8-t10", 1, headers=key)
    assert first.status_code == retried.status_code == 200
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert sent == [lock, write, lock]  # the retry is answered from the log: nothing written


def test_undo_and_resign_take_the_move_path_too(
    api: TestClient, app: FastAPI, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Undo and resign lock and write the game in the move store's transaction, as a move
    does: on PostgreSQL the same prepared lock and write (the undo also reads the move log)."""
    if backend != "postgres":
        pytest.skip("the two-round-trip path is PostgreSQL's")
    game = start(api, "quadrangle", 1)
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    sent = _count_round_trips(monkeypatch)
    lock, write = "BEGIN; EXECUTE ph_lock_game", "EXECUTE ph_update_game"
    assert api.post(f"/api/games/{game['id']}/undo").status_code == 200
    assert sent[0] == lock and sent[-1] == write
    sent.clear()
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    assert sent == [lock, write]
    assert [row[1] for row in log_rows(app, game["id"])] == ["move", "undo", "resign"]


def test_prepared_statements_take_what_their_calls_give() -> None:
    statements = PostgresStatements.compile(make_url("postgresql+psycopg://").get_dialect()())
    for prepared in (
        statements.lock_game,
        statements.first_response,
        statements.update_game,
        statements.insert_move,
    ):
        numbered = set(re.findall(r"\$(\d+)", prepared.prepare))
        arguments = re.findall(r"%\((\w+)\)s", prepared.execute)
        assert numbered == {str(i) for i in range(1, len(arguments) + 1)}, prepared
        assert "%(" not in prepared.prepare
        assert prepared.prepare.startswith(f"PREPARE {prepared.name} AS ")
    assert statements.write_and_commit.endswith("; COMMIT")
    assert statements.begin_and_lock.startswith("BEGIN; EXECUTE ph_lock_game(")
