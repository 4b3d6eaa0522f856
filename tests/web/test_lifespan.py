"""The app's lifespan (app/main.py): a client opened while another runs shares its lifespan."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient


def test_a_client_opened_inside_another_shares_its_lifespan(
    app: FastAPI, client: TestClient
) -> None:
    broker = app.state.services.broker
    loop, tasks = broker.loop, list(broker._tasks)
    assert loop is not None and tasks
    with TestClient(app, base_url="http://testserver") as inner:
        assert inner.get("/").status_code == 200
        # Nothing started again on the inner client's loop: its tasks would leave the first
        # loop's (on PostgreSQL, its LISTEN connection open for ever).
        assert broker.loop is loop and broker._tasks == tasks
    # The inner client's end closed nothing the first one still serves with.
    assert broker.loop is loop and not any(task.done() for task in tasks)
    assert client.get("/").status_code == 200
    assert client.get("/leaderboard").status_code == 200
