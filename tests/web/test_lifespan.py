"""The app's lifespan (app/main.py): a client opened while another runs shares its lifespan."""

from __future__ import annotations

import asyncio

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


def test_a_lifespan_starts_again_after_clients_closed_in_the_order_they_opened(
    app: FastAPI,
) -> None:
    """A test may close the first client before one it opened inside it: the next client's
    lifespan still starts the services (the broker, and the moves on its event loop)."""
    first = TestClient(app, base_url="http://testserver")
    inner = TestClient(app, base_url="http://testserver")
    first.__enter__()
    inner.__enter__()
    first.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    broker, inline = app.state.services.broker, app.state.services.move_store.inline
    assert broker.loop is None
    with TestClient(app, base_url="http://testserver") as again:
        loop = again.portal.call(asyncio.get_running_loop)  # type: ignore[union-attr]
        assert broker.loop is loop
        if inline is not None:  # PostgreSQL: moves on this client's event loop
            assert inline.loop is loop
        assert again.get("/").status_code == 200
