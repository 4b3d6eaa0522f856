"""What the app holds for routes and middleware (app/web/state.py), read from a request."""

from __future__ import annotations

from types import SimpleNamespace

from starlette.applications import Starlette
from starlette.requests import HTTPConnection

from app.web.state import services_of, settings_of
from tests.settings import suite_settings


def test_settings_and_services_are_read_from_the_app_of_the_request() -> None:
    app = Starlette()
    app.state.settings = suite_settings("sqlite://")
    app.state.services = SimpleNamespace(games=object())
    connection = HTTPConnection({"type": "http", "app": app, "headers": []})
    assert settings_of(connection) is app.state.settings
    assert services_of(connection) is app.state.services
