"""``/healthz`` (app/web/http/health.py): ok while the database answers, 503 when it does not,
and answered on a thread of its own."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from app.web.http import health


class FakeHealth:
    def __init__(self, answers: bool) -> None:
        self.answers = answers
        self.threads: list[str] = []

    def database_answers(self) -> bool:
        self.threads.append(threading.current_thread().name)
        return self.answers


def _ask(answers: bool) -> tuple[int, object, FakeHealth]:
    checks = FakeHealth(answers)
    app = FastAPI()
    app.state.services = SimpleNamespace(health=checks)
    app.include_router(health.router)
    with TestClient(app) as client:
        answer = client.get("/healthz")
    return answer.status_code, answer.json(), checks


def test_ok_while_the_database_answers() -> None:
    status, body, checks = _ask(True)
    assert (status, body) == (200, {"status": "ok"})
    assert len(checks.threads) == 1
    assert checks.threads[0] != threading.current_thread().name  # off the event loop


def test_503_when_it_does_not() -> None:
    status, body, _ = _ask(False)
    assert (status, body) == (503, {"status": "database unavailable"})


def test_it_is_left_out_of_the_api_schema() -> None:
    [route] = health.router.routes
    assert isinstance(route, APIRoute) and route.include_in_schema is False
