"""The moves' lane: the middleware folded into one layer for the two hottest routes (issue 26).

Every request goes through eleven layers of middleware, FastAPI's router and its exception and
exit-stack wrappers, each a coroutine and most a ``send`` of their own. For a move, whose work
is a few statements and microseconds of rules, that was a good part of what the app paid on
top of the database (bench/RESULTS.md, "the moves' lane"). ``MoveLane`` is the outermost
middleware: a ``POST /api/games/{game_id}/moves`` or ``POST /games/{game_id}/moves`` (the
board's) that declares a body within the size limit, with headers within theirs, is served
here, doing in one layer what the layers would do for it:

- the access log's request id, JSON line and metrics (``observe.record``);
- the security headers and ``Content-Language`` on the answer, the request's language for
  everything said while it is served (``i18n.WordsOf``);
- the size limits: anything over them (or a body of unknown length) is not taken here;
- HTTPS where cookies are Secure: a board move that would be refused for plain HTTP is not
  taken here either (the stack answers its page);
- admission: the same gates and per-client counts as the stack's (one ``Admission``);
- gzip as the stack's ``Gzip`` decides it (``compress.whole_answer``);
- for the board's move, the session and the CSRF check: the very middleware classes the stack
  runs for browser routes, with the same options, inside the lane;
- the route's direct binder (app/web/direct.py) called as FastAPI's route would, its errors
  answered by the app's own exception handlers, looked up as Starlette looks them up; an
  exception without a handler goes on to Starlette's server-error middleware, as before.

A request the binder declines (not JSON or not a form, a body that is not a move) goes to the
route's own FastAPI binding, with its exit stacks and Starlette's exception handling, and the
body read so far handed on: its 422s and 401s are FastAPI's. Every other request, and any move
that is not as above, goes through the whole stack unchanged. ``HeadAsGet`` does nothing for a
``POST``. ``tests/web/http/test_lane.py`` sends the same requests both ways and compares the
answers, headers included.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.asyncexitstack import AsyncExitStackMiddleware
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.direct import direct_binding
from app.web.http import observe
from app.web.http.compress import accepts_gzip, whole_answer
from app.web.http.headers import security_headers, with_security_headers
from app.web.http.https import needs_https
from app.web.http.limits import Admission, measured
from app.web.i18n import WordsOf, with_content_language

Handler = Callable[[Request, Exception], Any]


class _Recorded:
    """A request's ``receive`` that keeps what it handed out, so that what the binder read can be
    read again, message for message (a client gone mid-body included), by FastAPI's binding."""

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.messages: list[Message] = []

    async def __call__(self) -> Message:
        message = await self.receive()
        self.messages.append(message)
        return message

    async def again(self) -> Message:
        if self.messages:
            return self.messages.pop(0)
        return await self.receive()


@dataclass(frozen=True)
class Lane:
    """A route the lane serves, and the layers its answer needs inside the lane's own."""

    route: APIRoute
    serve: ASGIApp
    browser: bool  # a browser route: HTTPS required where cookies are Secure


class MoveLane:
    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: FastAPI,
        paths: tuple[str, ...],
        browser_layers: tuple[tuple[Callable[..., ASGIApp], dict[str, Any]], ...],
        admission: Admission,
        secure: bool,
        max_body: int,
        max_header: int,
        minimum_size: int,
    ) -> None:
        self.app = app
        self.routes = routes
        self.paths = paths
        self.browser_layers = browser_layers
        self.admission = admission
        self.secure = secure
        self.security = security_headers(secure)
        self.max_body = max_body
        self.max_header = max_header
        self.minimum_size = minimum_size
        self._lanes: tuple[Lane, ...] | None = None

    def _ready(self) -> tuple[Lane, ...]:
        """The routes and the exception handlers, found once the app is complete."""
        if self._lanes is not None:
            return self._lanes
        # Those of Starlette's exception middleware (500 and Exception are the server error's).
        self.handlers = {
            k: v for k, v in self.routes.exception_handlers.items() if k not in (500, Exception)
        }
        self.by_status = {k: v for k, v in self.handlers.items() if isinstance(k, int)}
        self.by_type = {k: v for k, v in self.handlers.items() if isinstance(k, type)}
        lanes = []
        for path in self.paths:
            route = next(
                (
                    r
                    for r in self.routes.router.routes
                    if isinstance(r, APIRoute) and r.path == path and "POST" in (r.methods or ())
                ),
                None,
            )
            if route is None:
                raise RuntimeError(f"the move lane has no POST route {path}")
            serve: ASGIApp = self._serve
            browser = not path.startswith("/api/")
            if browser:  # the session, and the CSRF check inside it, as the stack has them
                for layer, options in reversed(self.browser_layers):
                    serve = layer(serve, **options)
            lanes.append(Lane(route, serve, browser))
        self._lanes = tuple(lanes)
        return self._lanes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or not scope["path"].endswith("/moves")
        ):
            await self.app(scope, receive, send)
            return
        for lane in self._ready():
            match, child = lane.route.matches(scope)
            if match is Match.FULL:
                break
        else:
            await self.app(scope, receive, send)
            return
        if lane.browser and needs_https(scope, self.secure):
            await self.app(scope, receive, send)  # its page that says so
            return
        size, length = measured(scope)
        if (
            size > self.max_header
            or length is None
            or not length.isdigit()
            or int(length) > self.max_body
        ):
            await self.app(scope, receive, send)  # its refusal (413, 431) or its reading
            return
        scope.update(child)
        scope["router"] = self.routes.router
        await self._take(scope, receive, send, lane.serve)

    async def _take(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        serve: ASGIApp,
    ) -> None:
        """The move in the lane: what the layers above the route would do, done once."""
        started = time.perf_counter()
        request_id = observe.request_id(scope)
        accepted = accepts_gzip(scope)
        status = 500
        held: Message | None = None

        def headed(start: Message) -> Message:
            headers = with_content_language(list(start.get("headers") or ()), scope)
            headers = with_security_headers(headers, self.security)
            headers.append((b"x-request-id", request_id.encode()))
            return {**start, "headers": headers}

        async def sending(message: Message) -> None:
            nonlocal status, held
            kind = message["type"]
            if kind == "http.response.start":
                status = message["status"]
                held = message  # until the body, which decides the compression
                return
            if held is None:  # the rest of an answer already started
                await send(message)
                return
            start, held = held, None
            if kind == "http.response.body" and not message.get("more_body", False):
                # An answer in one piece, as every answer here is (a move's, an error's, a
                # refusal's): compressed as the stack's gzip layer compresses it.
                start, message = whole_answer(start, message, accepted, self.minimum_size)
            await send(headed(start))
            await send(message)

        try:
            with WordsOf(scope):
                await self.admission.admit(scope, receive, sending, serve)
        finally:
            observe.record(scope, request_id, status, started)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: APIRoute = scope["route"]
        bound = direct_binding(route)
        if bound is None:  # the route is on FastAPI's binding alone (tests compare the two)
            await self._through(route.app, scope, receive, send)
            return
        binder, fastapi_binding = bound
        received = _Recorded(receive)
        request = Request(scope, received, send)
        try:
            response = await binder(request)
        except Exception as exc:
            handler = self._handler_of(exc)
            if handler is None:
                raise
            response = await self._handled(handler, request, exc)
        if response is None:  # declined: FastAPI's binding, and its errors
            await self._through(fastapi_binding, scope, received.again, send)
            return
        await response(scope, receive, send)

    async def _through(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """``app`` served as the stack serves a route: Starlette's exception handling around
        FastAPI's exit stack."""
        inner = ExceptionMiddleware(AsyncExitStackMiddleware(app), handlers=self.handlers)
        await inner(scope, receive, send)

    def _handler_of(self, exc: Exception) -> Handler | None:
        """The app's handler for ``exc``, as Starlette's exception middleware finds it."""
        if isinstance(exc, HTTPException) and exc.status_code in self.by_status:
            return self.by_status[exc.status_code]
        for kind in type(exc).__mro__:
            if kind in self.by_type:
                return self.by_type[kind]
        return None

    @staticmethod
    async def _handled(handler: Handler, request: Request, exc: Exception) -> Response:
        if inspect.iscoroutinefunction(handler):
            answer = await handler(request, exc)
        else:
            answer = await run_in_threadpool(handler, request, exc)
        return answer  # type: ignore[no-any-return]
