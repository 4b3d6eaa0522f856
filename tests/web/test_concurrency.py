"""Two tabs, a double click, a retried request: exactly one move is applied.

Each request runs on its own thread through its own TestClient (no ``with`` block, so each
request gets its own event loop), and a barrier in front of the game-row lock holds every request
until all of them are inside the service at once: if the test client serialized requests, the
barrier would break instead of the test passing by luck. Runs on PostgreSQL (``SELECT … FOR
UPDATE``) and on SQLite (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.db.move_store import MoveTransaction
from app.services.games import Games
from tests.web.hidden import HiddenCardGuard
from tests.web.support import error_code, log_rows, start


def _hold_at_the_lock(monkeypatch: pytest.MonkeyPatch, games: Games, parties: int) -> None:
    """Make every change's transaction wait until ``parties`` requests have reached it, so
    that they all race for the game's row lock at once (moves, undos and resigns all take
    it in the move store's transaction)."""
    barrier = threading.Barrier(parties, timeout=60)
    transaction = games.store.transaction

    @contextmanager
    def gated() -> Iterator[MoveTransaction]:
        barrier.wait()
        with transaction() as tx:
            yield tx

    monkeypatch.setattr(games.store, "transaction", gated)


def _in_parallel(
    app: FastAPI, guard: HiddenCardGuard, token: str, sends: list[Callable[[TestClient], Any]]
) -> list[httpx.Response]:
    def run(send: Callable[[TestClient], httpx.Response]) -> httpx.Response:
        client = TestClient(app)
        client.headers["Authorization"] = token
        client.event_hooks["response"].append(guard.check)
        return send(client)

    with ThreadPoolExecutor(max_workers=len(sends)) as pool:
        return list(pool.map(run, sends))


def test_two_moves_against_one_version(
    api: TestClient, app: FastAPI, guard: HiddenCardGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = start(api, "quadrangle", 1)
    url = f"/api/games/{game['id']}/moves"
    _hold_at_the_lock(monkeypatch, app.state.services.games, 2)
    responses = _in_parallel(
        app,
        guard,
        str(api.headers["Authorization"]),
        [
            lambda c: c.post(url, json={"from": "t5", "to": "t9", "count": 1, "version": 0}),
            lambda c: c.post(url, json={"from": "t8", "to": "t10", "count": 1, "version": 0}),
        ],
    )
    monkeypatch.undo()
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 409], [r.text for r in responses]
    loser = next(r for r in responses if r.status_code == 409)
    assert error_code(loser, 409) == "stale_version"
    winner = next(r for r in responses if r.status_code == 200).json()
    assert winner["version"] == 1
    log = log_rows(app, game["id"])
    assert len(log) == 1 and log[0][:2] == (1, "move")
    assert api.get(f"/api/games/{game['id']}").json() == winner


def test_ten_retries_with_one_idempotency_key(
    api: TestClient, app: FastAPI, guard: HiddenCardGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = start(api, "corners", 1)
    url = f"/api/games/{game['id']}/moves"
    key = {"Idempotency-Key": f"retry-{uuid.uuid4()}"}
    body = {"from": "r5", "to": "f1", "count": 1, "version": 0}
    _hold_at_the_lock(monkeypatch, app.state.services.games, 10)
    responses = _in_parallel(
        app,
        guard,
        str(api.headers["Authorization"]),
        [lambda c: c.post(url, json=body, headers=key) for _ in range(10)],
    )
    monkeypatch.undo()
    assert [r.status_code for r in responses] == [200] * 10, [r.text for r in responses]
    first = responses[0].json()
    assert all(r.json() == first for r in responses)
    assert first["version"] == 1
    assert log_rows(app, game["id"]) == [(1, "move", "r5-f1")]
    assert api.get(f"/api/games/{game['id']}").json()["version"] == 1
