"""Bounded work per request, as ASGI middleware in front of everything else.

- :class:`SizeLimits`: a request whose headers are larger than ``MAX_HEADER_BYTES`` is answered
  431 and one whose body is larger than ``MAX_BODY_BYTES`` 413, before anything parses them
  (cookies, sessions, forms, JSON).
- :class:`Admission`: a request waits at most ``QUEUE_TIMEOUT_MS`` for its turn, then is answered
  503 with Retry-After instead of piling up. Expensive pages (replays, leaderboards, player and
  deal pages) take turns on a gate of their own, ``EXPENSIVE_CONCURRENCY`` per worker, so that
  a burst of them can never hold every thread the moves need. Replays, whose cost grows with
  the length of the game, may moreover take at most ``EXPENSIVE_SHARE`` of a worker's time (a
  budget of one second, refilled at that rate, each page spending the time it took), beyond
  which they are answered 503 at once, so that a flood costs next to no CPU.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import weakref
from dataclasses import dataclass

from anyio import Semaphore, WouldBlock, move_on_after
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.metrics import SHED

# The clock of the expensive pages' budget (the tests set another: no test waits on time).
monotonic = time.monotonic

_REPLAY = re.compile(r"^/(?:api/)?games/[^/]+/(?:replay|solution)$")  # cost grows with the line
_EXPENSIVE = re.compile(
    r"^/(?:api/)?games/[^/]+/(?:replay|solution|analysis)$|^/(?:api/)?leaderboard$|^/players/"
    r"|^/api/players/[^/]+$|^/deal/|^/api/deals/"
)
_FREE = ("/static/", "/healthz", "/metrics")  # no database work, or a thread of their own
# Event streams stay open for as long as a room is watched: they take no turn (which they
# would hold for good); their database work is a short read now and then, on the event loop's
# terms (app/web/pages/live.py).
_STREAM = re.compile(r"^/rooms/[^/]+/events$")


async def send_error(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    """A refusal without the app: JSON under /api, a small page elsewhere."""
    headers = [(b"connection", b"close")] if status in (413, 431) else []
    if status == 503:
        headers.append((b"retry-after", str(scope.get("retry_after", 2)).encode()))
    if str(scope.get("path", "")).startswith("/api/"):
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        kind = b"application/json"
    else:
        body = (
            "<!doctype html><meta charset=utf-8><title>Patience Hall</title>"
            f"<h1>Back in a moment</h1><p>{message}</p><p><a href='/'>Patience Hall</a></p>"
        ).encode()
        kind = b"text/html; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class SizeLimits:
    def __init__(self, app: ASGIApp, max_body: int, max_header: int) -> None:
        self.app = app
        self.max_body = max_body
        self.max_header = max_header

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        length = None
        for name, value in scope["headers"]:
            size += len(name) + len(value) + 4
            if name == b"content-length":
                length = value
        if size > self.max_header:
            await send_error(
                scope,
                send,
                431,
                "headers_too_large",
                f"The request's headers are larger than {self.max_header} bytes.",
            )
            return
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._too_large(scope, send)
            return
        if length is None and any(n == b"transfer-encoding" for n, _ in scope["headers"]):
            # A body of unknown length is read here first (it may not exceed the limit),
            # then handed to the app in one piece.
            body = bytearray()
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client went away
                body += message.get("body", b"")
                if len(body) > self.max_body:
                    await self._too_large(scope, send)
                    return
                if not message.get("more_body"):
                    break
            receive = _replay(bytes(body), receive)
        await self.app(scope, receive, send)

    async def _too_large(self, scope: Scope, send: Send) -> None:
        await send_error(
            scope,
            send,
            413,
            "payload_too_large",
            f"The request's body is larger than {self.max_body} bytes.",
        )


@dataclass
class _Gates:
    general: Semaphore
    expensive: Semaphore
    budget: float  # seconds expensive pages may still take now (a token bucket of time)
    refilled: float


class Admission:
    def __init__(
        self,
        app: ASGIApp,
        *,
        threads: int,
        expensive: int,
        expensive_share: float,
        queue_timeout_ms: int,
        retry_after: int,
    ) -> None:
        self.app = app
        self.share = expensive_share
        self.most = 1.0  # a second of rendering saved up: a person stepping through a replay
        # Requests let in at once per worker; more than the threads, so that the async parts
        # of requests (reading bodies, sending answers) overlap with the threads' work.
        self.general = threads * 4
        self.expensive = expensive
        self.timeout = queue_timeout_ms / 1000
        self.retry_after = retry_after
        # One set of gates per event loop (one per worker; the test client may run several).
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Gates] = (
            weakref.WeakKeyDictionary()
        )

    def _gates_here(self) -> _Gates:
        loop = asyncio.get_running_loop()
        gates = self._gates.get(loop)
        if gates is None:
            gates = _Gates(
                Semaphore(self.general), Semaphore(self.expensive), self.most, monotonic()
            )
            self._gates[loop] = gates
        return gates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path.startswith(_FREE) or _STREAM.match(path):
            await self.app(scope, receive, send)
            return
        gates = self._gates_here()
        expensive = _EXPENSIVE.match(path) is not None
        # A share of 1.0 gives expensive pages all of the time there is: no budget to keep
        # (a single render slower than the saved-up second would otherwise refuse the next).
        budgeted = self.share < 1.0 and _REPLAY.match(path) is not None
        if budgeted and not self._within_budget(gates):
            # Over their share: refused at once, so that a flood costs next to no CPU.
            await self._shed(scope, send)
            return
        gate = gates.expensive if expensive else gates.general
        acquired = False
        try:
            gate.acquire_nowait()  # the usual case, without a cancel scope (~35 µs)
            acquired = True
        except WouldBlock:
            with move_on_after(self.timeout):
                await gate.acquire()
                acquired = True
        if not acquired:
            await self._shed(scope, send)
            return
        started = monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            gate.release()
            if budgeted:
                gates.budget -= monotonic() - started

    def _within_budget(self, gates: _Gates) -> bool:
        now = monotonic()
        gates.budget = min(self.most, gates.budget + (now - gates.refilled) * self.share)
        gates.refilled = now
        return gates.budget > 0

    async def _shed(self, scope: Scope, send: Send) -> None:
        scope["retry_after"] = self.retry_after
        SHED.inc()
        await send_error(
            scope,
            send,
            503,
            "unavailable",
            "Patience Hall is very busy just now: try again in a few seconds.",
        )
