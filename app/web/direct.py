"""Routes whose common request is bound directly, without FastAPI's general binding (issue 26).

FastAPI binds a request to its endpoint with general machinery: it parses the content type
with the standard library's e-mail parser, solves a dependency graph, validates every parameter
through pydantic field by field and collects the errors. For the two move routes, the hottest of
the site, that was about a tenth of the app's CPU per move (bench/RESULTS.md, "Moves bound
directly"). A *binder* does the same for the request every client sends (the right content
type, a well-formed body, every field as the route declares it) in a few lines, and then calls
the route's own endpoint, so the endpoint stays the one place that says what a move does.

A binder answers ``None`` for anything else (a body it could not read included), before it has
called a dependency: that request then goes through FastAPI's own binding as before, with its
errors (422 and its body; 401 first when the player is unknown, as dependencies are solved
before parameters are validated; a 422 for a body the client stopped sending). So the contract
and the OpenAPI schema do not change, and a binder only has to be right about what it accepts.
``tests/web/test_direct.py`` holds each binder to that.

What a binder skips: FastAPI's ``dependency_overrides`` (nothing uses them here) and its
OpenTelemetry span for the dependencies (off unless configured).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from fastapi.routing import APIRoute, request_response
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

Binder = Callable[[Request], Awaitable[Response | None]]
_BINDER = "direct_binder"
_BOUND = "direct_binding"  # on a route bound directly: its binder, and FastAPI's binding


def binds(endpoint: Callable[..., Any]) -> Callable[[Binder], Binder]:
    """Marks a function as the direct binder of ``endpoint`` (see the module's docstring)."""

    def mark(binder: Binder) -> Binder:
        setattr(endpoint, _BINDER, binder)
        return binder

    return mark


def binder_of(route: APIRoute) -> Binder | None:
    binder = getattr(route.endpoint, _BINDER, None)
    return binder if callable(binder) else None


def bind_directly(route: APIRoute) -> None:
    """Serves ``route`` by its endpoint's binder first, and by FastAPI's binding when the binder
    declines. A route without a binder is left as it is."""
    binder = binder_of(route)
    if binder is None:
        return
    general = route.get_route_handler()

    async def handler(request: Request) -> Response:
        response = await binder(request)
        return response if response is not None else await general(request)

    # Starlette's wrapper as FastAPI builds it: the same exception handling and exit stacks.
    route.app = request_response(handler)
    setattr(route, _BOUND, (binder, request_response(general)))


def direct_binding(route: APIRoute) -> tuple[Binder, ASGIApp] | None:
    """A route's binder and FastAPI's binding of it as an ASGI app (for the move lane,
    app/web/http/lane.py); ``None`` while the route is on FastAPI's binding alone."""
    bound: tuple[Binder, ASGIApp] | None = getattr(route, _BOUND, None)
    return bound


def unbind(route: APIRoute) -> None:
    """FastAPI's binding only (tests compare the two)."""
    route.app = request_response(route.get_route_handler())
    setattr(route, _BOUND, None)


def media_type(request: Request) -> str:
    """The request's media type, lower case, without parameters (``; charset=…``)."""
    return request.headers.get("content-type", "").partition(";")[0].strip().lower()


# Starlette's form parser refuses a form of more fields than this (FastAPI's 400).
FORM_MAX_FIELDS = 1000


async def urlencoded_form(request: Request) -> FormData | None:
    """A form body (``application/x-www-form-urlencoded``) read as ``request.form()`` reads it:
    split on ``&`` with empty parts skipped, a part without ``=`` a name with an empty value,
    ``+`` and percent escapes decoded as UTF-8 (other bytes as Latin-1), the last of repeated
    names the one ``get`` gives. The standard library's parser does that in one call, where
    Starlette's streaming parser calls back for every part (some 10 µs of a board move).
    ``None`` for a body that could not be read or that Starlette would refuse (too many
    fields): the binder declines. The body stays with the request, so FastAPI's binding can
    read the form again."""
    try:
        body = await request.body()
    except Exception:  # the client went away mid-body: FastAPI's answer to that
        return None
    items: list[tuple[str, str | UploadFile]] = []
    items += parse_qsl(body.decode("latin-1"), keep_blank_values=True)
    if len(items) > FORM_MAX_FIELDS:
        return None
    return FormData(items)


def text_field(form: FormData, name: str, max_length: int) -> tuple[bool, str | None]:
    """A form field as FastAPI reads an optional ``Form(max_length=…)`` text: the last of
    repeated values, an empty one as absent. ``(False, None)`` when it is too long (FastAPI's
    422, so the binder declines)."""
    value = form.get(name)
    if value is None or value == "":
        return True, None
    if not isinstance(value, str) or len(value) > max_length:
        return False, None
    return True, value
