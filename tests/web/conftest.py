"""The app fixtures: an app per database backend, and clients that check every response.

tests/services and tests/db use them too (their conftests import them from here); the engine's
and the solver's tests do not, so they start without importing the web app.
"""

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
from tests.settings import suite_settings
from tests.web.answers import check_answer
from tests.web.hidden import HiddenCardGuard
from tests.web.live_support import close_opened


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
    return suite_settings(db_url, leaderboard_min_games=10)


@pytest.fixture(scope="session")
def app(settings: Settings) -> Iterator[FastAPI]:
    application = create_app(settings)
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


@pytest.fixture()
def guard(app: FastAPI) -> HiddenCardGuard:
    return HiddenCardGuard(app)


@pytest.fixture()
def client(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    """A browser-like client (keeps cookies); every response passes the hidden-card check."""
    with TestClient(app, base_url="http://testserver") as c:
        c.event_hooks["response"] += [guard.check, check_answer]
        yield c


@pytest.fixture()
def api(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    """An API client with a fresh player's bearer token."""
    with TestClient(app, base_url="http://testserver") as c:
        c.event_hooks["response"] += [guard.check, check_answer]
        created = c.post("/api/players", json={})
        assert created.status_code == 201, created.text
        c.headers["Authorization"] = f"Bearer {created.json()['token']}"
        c.player = created.json()  # type: ignore[attr-defined]
        yield c


@pytest.fixture()
def artifacts() -> Path:
    path = Path(__file__).resolve().parents[2] / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(autouse=True)
def _close_live_clients() -> Iterator[None]:
    yield
    close_opened()


@pytest.fixture()
def close_apps() -> Iterator[list[FastAPI]]:
    """Apps a test builds itself (``create_app``), closed at its end: append each."""
    apps: list[FastAPI] = []
    yield apps
    for app in apps:
        app.state.limits.clear()
        app.state.services.engine.dispose()
        app.state.services.move_store.close()
