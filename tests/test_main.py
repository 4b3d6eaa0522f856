"""The application factory (app/main.py): what ``create_app`` assembles from the settings, the
cookie middlewares kept off the API, and the background rounds that survive a failed round.
Its lifespan: tests/web/test_lifespan.py."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry import _logs, metrics, trace
from sqlalchemy.exc import OperationalError
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

import app.main as main_module
from app.main import BrowserOnly, create_app, every
from app.web.http.csrf import CSRFMiddleware
from app.web.http.limits import Admission
from tests.aio import run
from tests.migrated import migrated_sqlite
from tests.settings import suite_settings


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return migrated_sqlite(tmp_path_factory, "main")


def _made(url: str, **overrides: Any) -> Iterator[FastAPI]:
    made = create_app(suite_settings(url, json_logs=False, **overrides))
    yield made
    made.state.services.close()


@pytest.fixture()
def app(url: str) -> Iterator[FastAPI]:
    yield from _made(url)


class _Recorder:
    def __init__(self, app: Any = None, **options: Any) -> None:
        self.options = options
        self.paths: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.paths.append(scope["path"])


def test_cookie_middlewares_run_for_browser_routes_only() -> None:
    inner = _Recorder()
    only = BrowserOnly(inner, middleware=_Recorder, secret="x")
    assert isinstance(only.wrapped, _Recorder) and only.wrapped.options == {"secret": "x"}

    async def nothing() -> dict[str, Any]:
        return {}

    async def ignore(message: Any) -> None: ...

    async def scenario() -> None:
        for path in ("/api/games", "/games/abc", "/", "/apiary"):
            await only({"type": "http", "path": path}, nothing, ignore)
        await only({"type": "websocket", "path": "/api/x"}, nothing, ignore)

    run(scenario())
    assert inner.paths == ["/api/games"]  # the API ignores cookies by contract
    assert only.wrapped.paths == ["/games/abc", "/", "/apiary", "/api/x"]


def _rounds(outcomes: list[BaseException | None]) -> tuple[list[float], list[str]]:
    """Runs ``every`` until its pause has been asked once per outcome; the outcomes are what
    each round's work does (None: succeeds)."""
    pauses: list[float] = []
    done: list[str] = []
    queue = list(outcomes)

    async def pause(seconds: float) -> None:
        pauses.append(seconds)
        if not queue:
            raise asyncio.CancelledError

    def work() -> None:
        outcome = queue.pop(0)
        if outcome is not None:
            raise outcome
        done.append("ok")

    async def scenario() -> None:
        with pytest.raises(asyncio.CancelledError):
            await every(15.0, work, "sweeping rooms", pause=pause)

    run(scenario())
    return pauses, done


def test_a_background_round_runs_after_each_pause_until_cancelled() -> None:
    pauses, done = _rounds([None, None, None])
    assert pauses == [15.0] * 4 and done == ["ok"] * 3


def test_a_failed_round_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    away = OperationalError("SELECT 1", {}, Exception("database is locked"))
    with caplog.at_level(logging.WARNING, "app.main"):
        pauses, done = _rounds([away, ValueError("a bug"), None])
    assert done == ["ok"] and len(pauses) == 4
    unavailable, bug = caplog.records
    assert unavailable.levelno == logging.WARNING and unavailable.exc_info is None
    assert "sweeping rooms failed, database unavailable: Exception: database is locked" in (
        unavailable.getMessage()
    )
    assert bug.levelno == logging.ERROR and bug.exc_info is not None  # with its traceback
    assert bug.getMessage() == "sweeping rooms failed"


def test_the_app_holds_its_services_settings_and_limits(app: FastAPI) -> None:
    services = app.state.services
    assert app.state.settings is services.settings
    assert app.state.limits is not None and app.state.signin_guard is not None
    assert services.engine.url.render_as_string() == services.settings.database_url
    paths = {getattr(route, "path", None) for route in app.routes}
    assert {"/", "/api/games", "/healthz", "/metrics", "/static"} <= paths
    # Outermost first: the moves' lane, then every answer logged, security headers on
    # refusals too.
    names = [m.cls.__name__ for m in app.user_middleware]  # type: ignore[attr-defined]
    assert names[:4] == ["MoveLane", "AccessLog", "SecurityHeaders", "NeedsHttps"]
    assert names[-2:] == ["BrowserOnly", "BrowserOnly"]  # the session, then CSRF inside it
    assert app.user_middleware[-1].kwargs["middleware"] is CSRFMiddleware
    # The lane takes its turns at the stack's own admission.
    admission = app.user_middleware[0].kwargs["admission"]
    assert isinstance(admission, Admission)
    factories: list[object] = [m.cls for m in app.user_middleware]
    assert admission.around in factories


def test_api_docs_are_served_from_vendored_assets_when_public(app: FastAPI, url: str) -> None:
    assert app.openapi_url == "/openapi.json" and app.docs_url is None  # not FastAPI's CDN page
    mounts = [route.path for route in app.routes if isinstance(route, Mount)]
    assert mounts.index("/static/docs") < mounts.index("/static")  # the first match wins
    for hidden in _made(url, api_docs=False):
        assert hidden.openapi_url is None
        assert "/static/docs" not in [r.path for r in hidden.routes if isinstance(r, Mount)]


def test_importing_the_module_builds_nothing() -> None:
    with pytest.raises(AttributeError):
        main_module.nothing_here  # noqa: B018


def test_fastapis_own_telemetry_is_off_and_costs_a_request_nothing(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No OpenTelemetry SDK ships with the app (its /metrics and log lines say what telemetry
    would): FastAPI's own is off, so no request looks for configured providers."""
    looked: list[str] = []

    def counted(name: str, original: Callable[[], Any]) -> Callable[[], Any]:
        def get() -> Any:
            looked.append(name)
            return original()

        return get

    for module, name in (
        (trace, "get_tracer_provider"),
        (metrics, "get_meter_provider"),
        (_logs, "get_logger_provider"),
    ):
        monkeypatch.setattr(module, name, counted(name, getattr(module, name)))
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
    assert looked == []
    with TestClient(FastAPI()) as plain:  # FastAPI's default looks on every request
        plain.get("/")
    assert "get_tracer_provider" in looked
