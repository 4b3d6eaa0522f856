"""Bounded work per request, as ASGI middleware in front of everything else.

- :class:`SizeLimits`: a request whose headers are larger than ``MAX_HEADER_BYTES`` is answered
  431 and one whose body is larger than ``MAX_BODY_BYTES`` 413, before anything parses them
  (cookies, sessions, forms, JSON).
- :class:`Admission`: moves and the other cheap requests take turns on the general gate and
  wait at most ``QUEUE_TIMEOUT_MS`` for one, then are answered 503 with Retry-After. Every
  request whose cost can grow is *metered* in a class of its own, which never makes a move
  wait: hints (a hint holds a solver worker: ``HINT_CONCURRENCY``), analyses of finished games
  (one waits for a solver worker's search, seconds long: ``ANALYSIS_CONCURRENCY``; in the
  expensive pages' class a single analysis held back every replay and deal page for as long),
  the expensive pages (replays, solutions, try-again, leaderboards, player, deal and history
  pages: ``EXPENSIVE_CONCURRENCY``) and the opening of event streams (``STREAM_OPEN_CONCURRENCY``:
  the room read that opens one, not the stream it then holds). A metered class lets at most
  ``METERED_QUEUE`` more requests wait for a turn; a request beyond those is answered 503 at
  once, so a flood costs next to nothing and never waits out the queue timeout. Replays, whose
  cost grows with the length of the game, may moreover take at most ``EXPENSIVE_SHARE`` of a
  worker's time (a budget of one second, refilled at that rate, each page spending the time it
  took), beyond which they are answered 503 at once.
- Per client address (``scope["client"]``: behind a proxy, the address uvicorn's
  ``--proxy-headers`` took from ``X-Forwarded-For``), a worker runs at most
  ``CLIENT_CONCURRENCY`` requests at once and holds at most ``CLIENT_STREAMS`` event streams;
  beyond either the client is answered 429 with Retry-After at once, so that one client holding
  hundreds of connections cannot starve the others.
- Refusals are answered at once, but a client that comes back before the ``Retry-After`` it
  was given, and would be refused again, gets that refusal only when its ``Retry-After`` is
  over (``ENFORCE_RETRY_AFTER``): its connection waits on the event loop, taking no thread and
  no turn, so a flood that retries at once costs one refusal per connection per
  ``Retry-After`` rather than thousands a second. A request that would be let in never waits.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import weakref
from dataclasses import dataclass, field

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.metrics import SHED

# The clock of the expensive pages' budget and of the Retry-After kept, and the wait of an early
# retry (the tests set others: no test waits on time).
monotonic = time.monotonic
sleep = anyio.sleep
_TOLD_MAX = 10_000  # addresses remembered with their Retry-After, per worker

_REPLAY = re.compile(r"^/(?:api/)?games/[^/]+/(?:replay|solution)$")  # cost grows with the line
# The metered classes other than event streams, by path: the first that matches.
_METERED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^/(?:api/)?games/[^/]+/hint$"), "hints"),  # holds a solver worker
    (re.compile(r"^/(?:api/)?games/[^/]+/analysis$"), "analyses"),  # waits for a solver worker
    (
        re.compile(
            r"^/(?:api/)?games/[^/]+/(?:replay|solution|try-again)$|^/(?:api/)?leaderboard$"
            r"|^/players/|^/api/players/[^/]+$|^/deals?/|^/api/deals/|^/my-games$"
            r"|^/api/me/export$|^/account/export$"
        ),
        "expensive",
    ),
)
_FREE = ("/static/", "/healthz", "/metrics")  # no database work, or a thread of their own
# Event streams stay open for as long as a room is watched: the turn they take is given back
# once the stream's headers are sent (they would hold it for good); after that they read
# nothing per event (app/web/pages/live.py).
_STREAM = re.compile(r"^/rooms/[^/]+/events$")


def _metered_class(path: str) -> str | None:
    return next((name for pattern, name in _METERED if pattern.match(path)), None)


async def send_error(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    """A refusal without the app: JSON under /api, a small page elsewhere."""
    headers = [(b"connection", b"close")] if status in (413, 431) else []
    if status in (429, 503):
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


def measured(scope: Scope) -> tuple[int, bytes | None]:
    """The request's header size as the limit counts it, and its ``Content-Length`` (the last
    one), in one pass over the headers."""
    size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    length = None
    for name, value in scope["headers"]:
        size += len(name) + len(value) + 4
        if name == b"content-length":
            length = value
    return size, length


class SizeLimits:
    def __init__(self, app: ASGIApp, max_body: int, max_header: int) -> None:
        self.app = app
        self.max_body = max_body
        self.max_header = max_header

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        size, length = measured(scope)
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


async def _take_now(gate: asyncio.Semaphore) -> bool:
    """Takes a turn if one is free, without waiting: asyncio's ``acquire`` then returns at once."""
    if gate.locked():
        return False
    await gate.acquire()
    return True


async def _take_within(gate: asyncio.Semaphore, seconds: float) -> bool:
    """Waits at most ``seconds`` for a turn. asyncio's timeout, not an anyio cancel scope: with
    a worker's moves queued at the general gate, the scopes cost a few percent of its CPU
    (bench/RESULTS.md, issue 26)."""
    try:
        async with asyncio.timeout(seconds):
            await gate.acquire()
    except TimeoutError:
        return False
    return True


@dataclass
class _Class:
    """A metered class of requests: ``slots`` at once, at most ``queue`` more waiting."""

    gate: asyncio.Semaphore
    queue: int
    waiting: int = 0


@dataclass
class _Gates:
    general: asyncio.Semaphore
    metered: dict[str, _Class]  # by the names of _METERED
    streams: _Class
    budget: float  # seconds expensive pages may still take now (a token bucket of time)
    refilled: float
    # Requests and event streams under way per client address, in this worker.
    requests: dict[str, int] = field(default_factory=dict)
    open_streams: dict[str, int] = field(default_factory=dict)
    # When each address refused lately may come back (the monotonic clock).
    told: dict[str, float] = field(default_factory=dict)


async def _unplaced(scope: Scope, receive: Receive, send: Send) -> None:
    raise RuntimeError("an Admission served before it was put in front of an app")


class Admission:
    def __init__(
        self,
        app: ASGIApp = _unplaced,
        *,
        threads: int,
        expensive: int,
        expensive_share: float,
        queue_timeout_ms: int,
        retry_after: int,
        hints: int = 1,
        analyses: int = 1,
        stream_opens: int = 4,
        metered_queue: int = 2,
        client_concurrency: int = 32,
        client_streams: int = 64,
        enforce_retry_after: bool = True,
    ) -> None:
        self.app = app
        self.share = expensive_share
        self.most = 1.0  # a second of rendering saved up: a person stepping through a replay
        # Requests let in at once per worker; more than the threads, so that the async parts
        # of requests (reading bodies, sending answers) overlap with the threads' work.
        self.general = threads * 4
        self.slots = {"hints": hints, "analyses": analyses, "expensive": expensive}
        self.stream_opens = stream_opens
        self.metered_queue = metered_queue
        self.client_concurrency = client_concurrency
        self.client_streams = client_streams
        self.enforce_retry_after = enforce_retry_after
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
                asyncio.Semaphore(self.general),
                {
                    name: _Class(asyncio.Semaphore(slots), self.metered_queue)
                    for name, slots in self.slots.items()
                },
                _Class(asyncio.Semaphore(self.stream_opens), self.metered_queue),
                self.most,
                monotonic(),
            )
            self._gates[loop] = gates
        return gates

    def around(self, app: ASGIApp) -> Admission:
        """This admission, its gates and counts, in front of ``app`` (a middleware factory): the
        stack and the move lane (app/web/http/lane.py) take their turns from the same gates."""
        self.app = app
        return self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.admit(scope, receive, send, self.app)

    async def admit(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        """Runs ``app`` for the request once it is let in, or answers the refusal."""
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path.startswith(_FREE):
            await app(scope, receive, send)
            return
        gates = self._gates_here()
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        scope["ph.address"] = address
        stream = _STREAM.match(path) is not None
        counts, cap = (
            (gates.open_streams, self.client_streams)
            if stream
            else (gates.requests, self.client_concurrency)
        )
        held = counts.get(address, 0)
        if held >= cap:
            await self._too_many(scope, send, "event streams" if stream else "requests")
            return
        counts[address] = held + 1
        try:
            if stream:
                await self._metered(app, gates, gates.streams, scope, receive, send, opening=True)
            elif (name := _metered_class(path)) is not None:
                await self._metered(app, gates, gates.metered[name], scope, receive, send)
            else:
                await self._general(app, gates, scope, receive, send)
        finally:
            left = counts[address] - 1
            if left:
                counts[address] = left
            else:
                del counts[address]

    async def _general(
        self, app: ASGIApp, gates: _Gates, scope: Scope, receive: Receive, send: Send
    ) -> None:
        gate = gates.general
        # The usual case at once, with no deadline set up for it.
        if not (await _take_now(gate) or await _take_within(gate, self.timeout)):
            await self._shed(scope, send)
            return
        try:
            await app(scope, receive, send)
        finally:
            gate.release()

    async def _metered(
        self,
        app: ASGIApp,
        gates: _Gates,
        metered: _Class,
        scope: Scope,
        receive: Receive,
        send: Send,
        opening: bool = False,
    ) -> None:
        # A share of 1.0 gives expensive pages all of the time there is: no budget to keep
        # (a single render slower than the saved-up second would otherwise refuse the next).
        budgeted = self.share < 1.0 and _REPLAY.match(str(scope.get("path", ""))) is not None
        if budgeted and not self._within_budget(gates):
            # Over their share: refused at once, so that a flood costs next to no CPU.
            await self._shed(scope, send)
            return
        gate = metered.gate
        if not await _take_now(gate):
            if metered.waiting >= metered.queue:  # full: refused at once, never queued
                await self._shed(scope, send)
                return
            metered.waiting += 1
            try:
                acquired = await _take_within(gate, self.timeout)
            finally:
                metered.waiting -= 1
            if not acquired:
                await self._shed(scope, send)
                return
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                gate.release()

        send_on: Send = send
        if opening:  # a stream gives its turn back once its headers are out

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    release()
                await send(message)

            send_on = sending
        started = monotonic()
        try:
            await app(scope, receive, send_on)
        finally:
            release()
            if budgeted:
                gates.budget -= monotonic() - started

    def _within_budget(self, gates: _Gates) -> bool:
        now = monotonic()
        gates.budget = min(self.most, gates.budget + (now - gates.refilled) * self.share)
        gates.refilled = now
        return gates.budget > 0

    async def _early_retry(self, scope: Scope, retry_after: int) -> None:
        """Holds a refusal until the address's earlier Retry-After is over, then notes the new
        one (no thread, no turn: the connection waits on the event loop)."""
        if not self.enforce_retry_after:
            return
        gates = self._gates_here()
        address = str(scope.get("ph.address", "unknown"))
        now = monotonic()
        until = gates.told.get(address, 0.0)
        if now < until:
            await sleep(min(until - now, retry_after))
            now = monotonic()
        told = gates.told
        if len(told) >= _TOLD_MAX and address not in told:
            for key in [k for k, t in told.items() if t <= now] or list(told)[: _TOLD_MAX // 2]:
                del told[key]
        told[address] = now + retry_after

    async def _shed(self, scope: Scope, send: Send) -> None:
        await self._early_retry(scope, self.retry_after)
        scope["retry_after"] = self.retry_after
        SHED.inc()
        await send_error(
            scope,
            send,
            503,
            "unavailable",
            "Patience Hall is very busy just now: try again in a few seconds.",
        )

    async def _too_many(self, scope: Scope, send: Send, what: str) -> None:
        await self._early_retry(scope, 1)
        scope["retry_after"] = 1
        SHED.inc()
        await send_error(
            scope,
            send,
            429,
            "rate_limited",
            f"Too many {what} at once from this address: try again in a moment.",
        )
