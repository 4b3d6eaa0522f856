"""``after`` and ``Last-Event-ID`` beyond the event id's range (issue 21): a clean 422 page
before anything is read, never a traceback; the largest id there can be reads cleanly on both
databases. On SQLite and PostgreSQL."""

from __future__ import annotations

import logging

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.services.rooms.views import EVENT_ID_MAX
from app.web.pages.live import _cursor

TOO_BIG = ["99999999999999999999999", str(EVENT_ID_MAX + 1), str(2**63), " 2147483648 "]


def _room(api: TestClient) -> str:
    created = api.post("/api/rooms", json={"game": "corners"})
    assert created.status_code == 201, created.text
    return str(created.json()["code"])


@pytest.mark.parametrize("value", TOO_BIG)
def test_a_last_event_id_beyond_any_event_id_is_a_422_page(
    api: TestClient, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    code = _room(api)
    with caplog.at_level(logging.WARNING):
        answer = api.get(f"/rooms/{code}/events", headers={"Last-Event-ID": value})
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert "Last-Event-ID must be an event id from 0 to 2147483647" in answer.text
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("value", TOO_BIG[:3])
def test_an_after_beyond_any_event_id_is_a_422_page(
    api: TestClient, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    code = _room(api)
    with caplog.at_level(logging.WARNING):
        answer = api.get(f"/rooms/{code}/events?after={value}")
    assert answer.status_code == 422, answer.text
    assert "text/html" in answer.headers["content-type"] and "after" in answer.text
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_the_largest_event_id_reads_cleanly_on_both_databases(
    api: TestClient, app: FastAPI
) -> None:
    code = _room(api)
    rooms = app.state.services.rooms
    assert rooms.events_after(code, EVENT_ID_MAX) == []
    assert [row.kind for row in rooms.events_after(code, 0)] == ["room"]


def test_a_last_event_id_that_is_no_number_is_ignored() -> None:
    # Non-ASCII digits ("²".isdigit() is true) and text are as no header: ``after`` stands.
    assert _cursor("²", 5) == 5 and _cursor("١٢", None) is None and _cursor("x1", 3) == 3
    assert _cursor(f" {EVENT_ID_MAX} ", None) == EVENT_ID_MAX
