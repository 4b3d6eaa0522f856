"""Shared fixtures: an app per database backend, and clients that check every response."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.databases import BACKENDS, database_url, migrate
from tests.web.hidden import HiddenCardGuard

# The suite plays far faster than people: its limits are high enough never to be hit, yet
# counted (tests/web/test_security.py checks the real ones on apps of their own).
TEST_LIMITS = {
    "rate_limit_signin": "100000/minute",
    "rate_limit_new_players": "100000/minute",
    "rate_limit_new_games": "100000/minute",
    "rate_limit_moves": "100000/minute",
    "rate_limit_address": "1000000/minute",
}


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def db_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    url = database_url(backend, tmp_path_factory.mktemp("db"), f"ph_test_{_worker()}")
    migrate(url)
    return url


@pytest.fixture(scope="session")
def settings(db_url: str) -> Settings:
    return Settings(app_env="test", database_url=db_url, leaderboard_min_games=10, **TEST_LIMITS)


@pytest.fixture(scope="session")
def app(settings: Settings) -> Iterator[FastAPI]:
    application = create_app(settings)
    yield application
    application.state.engine.dispose()
    application.state.games.close()


@pytest.fixture()
def guard(app: FastAPI) -> HiddenCardGuard:
    return HiddenCardGuard(app)


@pytest.fixture()
def client(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    """A browser-like client (keeps cookies); every response passes the hidden-card check."""
    with TestClient(app, base_url="http://testserver") as c:
        c.event_hooks["response"].append(guard.check)
        yield c


@pytest.fixture()
def api(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    """An API client with a fresh player's bearer token."""
    with TestClient(app, base_url="http://testserver") as c:
        c.event_hooks["response"].append(guard.check)
        created = c.post("/api/players", json={})
        assert created.status_code == 201, created.text
        c.headers["Authorization"] = f"Bearer {created.json()['token']}"
        c.player = created.json()  # type: ignore[attr-defined]
        yield c


@pytest.fixture()
def artifacts() -> Path:
    path = Path(__file__).resolve().parent.parent / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path
