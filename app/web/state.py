"""What the app holds for its routes and middleware, read in one place: the settings, the
services (app/bootstrap.py). Routes take them as dependencies
(app/web/deps.py); middleware, error handlers and helpers outside a route's signature read
them here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection

from app.config import Settings

if TYPE_CHECKING:
    from app.bootstrap import Services


def settings_of(request: HTTPConnection) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def services_of(request: HTTPConnection) -> Services:
    services: Services = request.app.state.services
    return services
