"""The database unavailable (app/web/http/faults.py), on a bare app with only its handlers: a
503 with Retry-After, JSON under /api and a page elsewhere, one log line, and any other database
error left to be the server error it is. (The real outages: tests/web/test_faults.py.)"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.exc import IntegrityError, OperationalError

from app.web.http import errors, faults
from tests.settings import suite_settings


class _Lost(Exception):
    pass


@pytest.fixture(scope="module")
def bare() -> Iterator[TestClient]:
    app = FastAPI()
    app.state.settings = suite_settings("sqlite://", retry_after_seconds=4)
    errors.install(app)
    faults.install(app)

    def fail(kind: str) -> None:
        if kind == "down":
            raise OperationalError("SELECT 1", {}, _Lost("connection refused"))
        raise IntegrityError("INSERT", {}, _Lost("duplicate key"))

    @app.get("/api/fail/{kind}")
    def api_fail(kind: str) -> None:
        fail(kind)

    @app.get("/fail/{kind}")
    def page_fail(kind: str) -> None:
        fail(kind)

    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_an_unreachable_database_is_a_json_503_under_api(
    bare: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "patience_hall.faults"):
        answer = bare.get("/api/fail/down")
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "4"
    assert answer.json()["error"] == {"code": "unavailable", "message": faults.UNAVAILABLE_MESSAGE}
    [record] = [r for r in caplog.records if r.name == "patience_hall.faults"]
    assert "GET /api/fail/down" in record.getMessage() and record.exc_info is None


def test_an_unreachable_database_is_a_page_for_browsers(bare: TestClient) -> None:
    answer = bare.get("/fail/down")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "4"
    assert answer.headers["content-type"].startswith("text/html")
    assert "cannot reach its database" in answer.text


def test_other_database_errors_stay_server_errors(bare: TestClient) -> None:
    assert bare.get("/api/fail/duplicate").status_code == 500
