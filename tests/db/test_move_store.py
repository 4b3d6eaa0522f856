"""The move transaction (app/db/move_store.py, on the statements of app/db/game_rows.py): the
same behaviour on both databases, and on PostgreSQL two round trips of statements the app
prepared itself."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import anyio.to_thread
import psycopg
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url
from sqlalchemy.util import await_

from app.db.move_sql import PostgresStatements
from app.db.move_store import CoreTransaction, InlineMoves, PostgresTransaction
from app.db.session import make_inline_move_engine
from app.engine import Move
from tests.aio import run
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
    store = app.state.services.move_store
    with store.transaction() as tx:
        expected = PostgresTransaction if backend == "postgres" else CoreTransaction
        assert isinstance(tx, expected)
    if backend == "postgres":
        # The routes' moves run on the event loop's pool, of the main pool's size; the
        # synchronous one serves only the moves made in threads (issue 26).
        settings = app.state.settings
        assert store.inline is not None
        assert store.inline.engine.pool.size() == settings.db_pool_size
        assert store.engine.pool.size() == settings.threadpool_size + 2
    else:
        assert store.inline is None  # SQLite's moves stay in the thread pool


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _count_round_trips(
    monkeypatch: pytest.MonkeyPatch, where: list[bool] | None = None
) -> list[str]:
    """The statements the move path sends, on the thread pool's cursor or the event loop's
    (``where``, when given, says for each whether it was sent from an event loop)."""
    sent: list[str] = []
    original: Callable[..., Any] = psycopg.ClientCursor.execute
    original_async: Callable[..., Any] = psycopg.AsyncClientCursor.execute

    def counting(self: psycopg.ClientCursor[Any], query: str, *args: Any, **kw: Any) -> Any:
        sent.append(query.split("(")[0])
        if where is not None:
            where.append(_on_a_loop())
        return original(self, query, *args, **kw)

    async def counting_async(
        self: psycopg.AsyncClientCursor[Any], query: str, *args: Any, **kw: Any
    ) -> Any:
        sent.append(query.split("(")[0])
        if where is not None:
            where.append(_on_a_loop())
        return await original_async(self, query, *args, **kw)

    monkeypatch.setattr(psycopg.ClientCursor, "execute", counting)
    monkeypatch.setattr(psycopg.AsyncClientCursor, "execute", counting_async)
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


def test_api_moves_on_postgres_wait_on_the_event_loop_not_in_a_thread(
    api: TestClient, app: FastAPI, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: the API's move, undo and resign send their statements from the event loop
    (psycopg's async connection, through SQLAlchemy's asyncio extension): no thread-pool hop,
    not even when the token's owner is read again (issue 28: one move in ten of a player
    moving every few seconds)."""
    if backend != "postgres":
        pytest.skip("SQLite's moves stay in the thread pool")
    game = start(api, "quadrangle", 1)
    where: list[bool] = []
    sent = _count_round_trips(monkeypatch, where)
    # Every hop to a thread (FastAPI's for a plain ``def`` route or dependency, and the app's
    # own) goes through anyio's to_thread.run_sync.
    hops: list[str] = []
    original = anyio.to_thread.run_sync

    async def hopping(func: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        hops.append(getattr(func, "__qualname__", repr(func)))
        return await original(func, *args, **kw)

    monkeypatch.setattr(anyio.to_thread, "run_sync", hopping)
    players = app.state.services.players
    players._token_owner.clear()  # as after TOKEN_CACHE_SECONDS: the owner is read again
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    assert players._token_owner  # read, on the loop, and remembered
    assert api.post(f"/api/games/{game['id']}/undo", json={"version": 1}).status_code == 200
    assert hops == []
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    # Only what follows the end of a game goes to a thread (the listeners may block; the
    # solver then judges the deal, off the request).
    assert hops[0] == "GameActions._after", hops
    assert len(sent) >= 6 and all(where), (sent, where)


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


def test_a_move_under_way_on_the_event_loop_finishes_when_its_request_is_cancelled(
    api: TestClient, app: FastAPI, backend: str
) -> None:
    """A move on the event loop is shielded once it starts, as a move in a thread always was:
    a cancelled request (a worker shutting down) neither leaves its transaction half done nor
    loses a move whose COMMIT may be under way; it is applied once, and a retry with the same
    Idempotency-Key gets its answer."""
    if backend != "postgres":
        pytest.skip("SQLite's moves stay in the thread pool")
    game = start(api, "quadrangle", 1)
    services = app.state.services
    engine = make_inline_move_engine(services.engine)
    assert engine is not None
    inline = InlineMoves.of(engine)
    games = replace(services.games, store=replace(services.games.store, inline=inline))
    locked = inline.transaction
    reached: list[asyncio.Event] = []
    release: list[asyncio.Event] = []

    @contextmanager
    def held() -> Iterator[Any]:
        tx: Any
        with locked() as tx:
            lock = tx.lock

            def lock_then_wait(*args: Any) -> Any:
                found = lock(*args)  # the row is locked: the transaction is under way
                reached[0].set()
                await_(release[0].wait())
                return found

            tx.lock = lock_then_wait
            yield tx

    inline.transaction = held

    async def scenario() -> BaseException | None:
        reached.append(asyncio.Event())
        release.append(asyncio.Event())
        inline.start()
        try:
            task = asyncio.create_task(
                games.move_async(
                    game["id"], game["player"]["id"], Move.parse("t5-t9"), 0, "cancelled-1"
                )
            )
            await reached[0].wait()
            task.cancel()
            release[0].set()
            done = await asyncio.gather(task, return_exceptions=True)
            # The move goes on in a task of its own: wait for it before closing its pool.
            left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            await asyncio.gather(*left)
            return done[0] if isinstance(done[0], BaseException) else None
        finally:
            await inline.stop()

    assert isinstance(run(scenario()), asyncio.CancelledError)
    assert log_rows(app, game["id"]) == [(1, "move", "t5-t9")]
    retried = move(api, game["id"], "t5-t9", 0, headers={"Idempotency-Key": "cancelled-1"})
    assert retried.status_code == 200, retried.text
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert retried.json()["version"] == 1


def test_a_moves_connection_goes_back_without_a_reset_and_idle(
    api: TestClient, app: FastAPI, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The move pools skip the pool's reset (a driver ``rollback()`` per checkin): the move path
    ends its own transactions. A move refused after its BEGIN still leaves its connection out of
    any transaction, and the cursor made for a connection serves its later moves."""
    if backend != "postgres":
        pytest.skip("the move path's own pools are PostgreSQL's")
    game = start(api, "quadrangle", 1)
    rollbacks: list[str] = []  # the driver's rollback(), which the pool's reset calls
    cursors: list[tuple[int, int]] = []  # (cursor, connection) of every statement
    original_rollback: Callable[..., Any] = psycopg.AsyncConnection.rollback
    original_execute: Callable[..., Any] = psycopg.AsyncClientCursor.execute

    async def rollback(self: psycopg.AsyncConnection[Any]) -> None:
        rollbacks.append("rollback()")
        await original_rollback(self)

    async def execute(self: psycopg.AsyncClientCursor[Any], query: str, *a: Any, **kw: Any) -> Any:
        cursors.append((id(self), id(self.connection)))
        return await original_execute(self, query, *a, **kw)

    monkeypatch.setattr(psycopg.AsyncConnection, "rollback", rollback)
    monkeypatch.setattr(psycopg.AsyncClientCursor, "execute", execute)
    assert error_code(move(api, game["id"], "t5-t9", 7), 409) == "stale_version"  # locked, refused
    pool_size = app.state.settings.db_pool_size
    for deal in range(2, pool_size + 3):  # more moves than connections: some serve again
        other = start(api, "corners", deal)
        first = other["legal_moves"][0]
        played = move(api, other["id"], f"{first['from']}-{first['to']}/{first['count']}", 0)
        assert played.status_code == 200, played.text
    assert rollbacks == []
    # Every connection the pool holds is out of any transaction.
    inline = app.state.services.move_store.inline
    assert inline is not None

    async def statuses() -> list[psycopg.pq.TransactionStatus]:
        async with contextlib.AsyncExitStack() as stack:
            held = [
                await stack.enter_async_context(inline.engine.connect())
                for _ in range(inline.engine.pool.checkedin())
            ]
            return [
                (await db.get_raw_connection()).driver_connection.info.transaction_status
                for db in held
            ]

    found = api.portal.call(statuses)  # type: ignore[union-attr]
    assert found and set(found) == {psycopg.pq.TransactionStatus.IDLE}
    # Each connection served its moves with the one cursor made for it.
    connections = {connection for _, connection in cursors}
    assert len(cursors) > 2 * len(connections)
    assert len({cursor for cursor, _ in cursors}) == len(connections)
