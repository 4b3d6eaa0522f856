"""One JSON log line per request, the Prometheus metrics, and ``GET /metrics``."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy import Engine
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.metrics import LATENCY, MOVES, POOL_IN_USE, REQUESTS, exposition
from app.web.state import settings_of

router = APIRouter()
access = logging.getLogger("patience_hall.access")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_MOVE_ROUTES = {"/api/games/{game_id}/moves", "/games/{game_id}/moves"}


def new_request_id() -> str:
    """32 random hex digits, as ``uuid4().hex`` but without building a ``UUID`` (most of its
    3 µs a request)."""
    return os.urandom(16).hex()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Open while developing; in production only with ``Authorization: Bearer
    <METRICS_TOKEN>`` (no token set: not served at all, 404)."""
    settings = settings_of(request)
    if settings.app_env == "production":
        token = settings.metrics_token
        if not token:
            return Response(status_code=404)
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return Response(status_code=401, headers={"www-authenticate": "Bearer"})
    gauges: PoolGauges = request.app.state.pool_gauges
    gauges.sample()  # this worker's own, as they are now
    body, kind = exposition()
    return Response(body, media_type=kind)


_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one for every line, not one a line


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object: time, level, logger, message and any ``extra`` fields
    given as ``extra={"fields": {...}}``."""

    def __init__(self) -> None:
        super().__init__()
        # The text of the latest second written, with that second: one attribute, so that
        # threads writing lines at once never pair one second with another's text.
        self._second: tuple[int, str] = (-1, "")

    def _ts(self, created: float) -> str:
        """``2026-11-28T17:38:06.123+00:00``, as ``isoformat(timespec="milliseconds")``."""
        fraction, whole = math.modf(created)
        second, micro = int(whole), round(fraction * 1e6)  # rounded as ``fromtimestamp`` does
        if micro >= 1_000_000:
            second, micro = second + 1, micro - 1_000_000
        kept = self._second
        if kept[0] != second:
            kept = (second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S"))
            self._second = kept
        return f"{kept[1]}.{micro // 1000:03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": self._ts(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        data.update(getattr(record, "fields", {}))
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return _ENCODER.encode(data)


def configure_logging(json_lines: bool) -> None:
    """The app's loggers (``patience_hall.*``) write to stderr, one JSON object a line."""
    root = logging.getLogger("patience_hall")
    root.setLevel(logging.INFO)
    if root.handlers and not root.propagate:  # configured by app.serve (JSON, every logger)
        return
    if any(getattr(h, "patience_hall", False) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.patience_hall = True  # type: ignore[attr-defined]
    handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter(logging.BASIC_FORMAT))
    root.addHandler(handler)


POOL_SAMPLE_S = 1.0  # how often each process writes its pools' gauges


@dataclass(frozen=True)
class PoolGauges:
    """``ph_db_connections_in_use{pool=name}``, read off the pools when sampled, not counted at
    every checkout: the gauge's listeners were a few percent of a move's connection (a write to
    the multiprocess file at each checkout and each checkin). A pool that cannot say how many
    of its connections are out (SQLite's in-memory pools, one connection) has no gauge."""

    pools: tuple[tuple[Any, Engine], ...] = ()

    def add(self, engine: Engine, name: str) -> PoolGauges:
        if not hasattr(engine.pool, "checkedout"):
            return self
        return PoolGauges((*self.pools, (POOL_IN_USE.labels(name), engine)))

    def sample(self) -> None:
        for gauge, engine in self.pools:
            # The engine's pool of now: disposing of an engine gives it a new one.
            gauge.set(engine.pool.checkedout())  # type: ignore[attr-defined]

    async def keep_sampling(self, every_s: float = POOL_SAMPLE_S) -> None:
        """Until cancelled: what a scrape sees is at most ``every_s`` old, whichever worker
        answers it (the one that does samples its own pools first)."""
        while True:
            self.sample()
            await asyncio.sleep(every_s)


_CHILDREN: dict[tuple[str, str, int], tuple[Any, Any, Any]] = {}


def _count(method: str, route: str, status: int, elapsed: float) -> None:
    """The request's metrics, through label children looked up once per (method, route,
    status): ``labels()`` costs more than the update itself."""
    key = (method, route, status)
    children = _CHILDREN.get(key)
    if children is None:
        move = MOVES.labels(str(status)) if route in _MOVE_ROUTES and method == "POST" else None
        children = (REQUESTS.labels(method, route, str(status)), LATENCY.labels(route), move)
        _CHILDREN[key] = children
    requests, latency, moves = children
    requests.inc()
    latency.observe(elapsed)
    if moves is not None:
        moves.inc()


def _route_of(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    return "/static" if str(scope.get("path", "")).startswith("/static/") else "unmatched"


def request_id(scope: Scope) -> str:
    """The client's ``X-Request-ID`` when it is sane, else a new one."""
    given = next((v for n, v in scope["headers"] if n == b"x-request-id"), b"")
    text = given.decode("latin-1")
    return text if _REQUEST_ID.fullmatch(text) else new_request_id()


def record(scope: Scope, request_id: str, status: int, started: float) -> None:
    """A request's metrics and its JSON line (not for ``/static``)."""
    elapsed = time.perf_counter() - started
    route = _route_of(scope)
    method = scope["method"]
    _count(method, route, status, elapsed)
    if route != "/static" and access.isEnabledFor(logging.INFO):
        # The record made and handled as ``info`` would, without its search of the stack for
        # the caller's file and line, which no line here shows.
        fields = {
            "request_id": request_id,
            "method": method,
            "route": route,
            "path": scope.get("path", ""),
            "status": status,
            "ms": round(elapsed * 1000, 2),
        }
        args = (method, route, status)
        line = access.makeRecord(
            access.name, logging.INFO, __file__, 0, "%s %s %s", args, None,
            extra={"fields": fields},
        )  # fmt: skip
        access.handle(line)


class AccessLog:
    """Outermost: a request id (``X-Request-ID``, the client's if it is sane), one JSON line and
    the metrics for every request, 500s included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        rid = request_id(scope)
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", rid.encode()),
                ]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            record(scope, rid, status, started)
