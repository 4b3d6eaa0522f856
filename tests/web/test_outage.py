"""A real outage: PostgreSQL stopped under the app, then started again, on a server of the
test's own (bench/pg_instance.py; the shared server is never stopped). While it is down every
answer is a 503 with Retry-After, never a 500; once it is back, not one request fails on the
connections the restart closed, and nothing acknowledged was lost."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.main import create_app
from tests.databases import migrate
from tests.own_postgres import PgInstance
from tests.settings import suite_settings
from tests.web.hidden import HiddenCardGuard
from tests.web.support import error_code, log_rows, move, start


@pytest.fixture()
def outage_app(own_postgres: PgInstance) -> Iterator[FastAPI]:
    if not own_postgres.running:
        own_postgres.start()
    url = own_postgres.url("postgres")
    migrate(url)
    application = create_app(suite_settings(url))
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


def _first(game: dict[str, Any]) -> str:
    m = game["legal_moves"][0]
    return f"{m['from']}-{m['to']}" + (f"/{m['count']}" if m["count"] != 1 else "")


@pytest.mark.slow
def test_postgres_stopped_then_started(outage_app: FastAPI, own_postgres: PgInstance) -> None:
    guard = HiddenCardGuard(outage_app)
    with TestClient(outage_app) as api, TestClient(outage_app) as browser:
        token = api.post("/api/players", json={}).json()["token"]
        api.headers["Authorization"] = f"Bearer {token}"
        game = start(api, "corners", 41)
        played = move(api, game["id"], _first(game), 0)
        assert played.status_code == 200, played.text
        state = played.json()
        assert browser.get(f"/games/{game['id']}").status_code == 200

        own_postgres.stop()  # fast shutdown: every backend is terminated
        for response in (
            move(api, game["id"], _first(state), state["version"], {"Idempotency-Key": "k1"}),
            api.get(f"/api/games/{game['id']}"),
            api.post("/api/players", json={}),
        ):
            assert error_code(response, 503) == "unavailable"
            assert int(response.headers["retry-after"]) >= 1
        page = browser.get(f"/games/{game['id']}")
        assert page.status_code == 503 and "Back in a moment" in page.text
        assert browser.get("/healthz").status_code == 503

        own_postgres.start()
        # Both pools still hold connections the restart closed: none of them may fail a request.
        api.event_hooks["response"].append(guard.check)
        assert browser.get("/healthz").status_code == 200
        read = api.get(f"/api/games/{game['id']}")
        assert read.status_code == 200 and read.json()["version"] == state["version"]
        again = move(api, game["id"], _first(state), state["version"], {"Idempotency-Key": "k1"})
        assert again.status_code == 200, again.text
        assert again.json()["version"] == state["version"] + 1
        assert browser.get(f"/games/{game['id']}").status_code == 200
    assert [action for _, action, _ in log_rows(outage_app, game["id"])] == ["move", "move"]
