"""What every move pays around its route: each middleware layer's CPU, and its rate limits' share
of Redis.

    .venv/bin/python bench/fixed_costs.py [--requests 3000] [--rounds 5] [--redis-url URL]
        [--postgres-url URL]

On a box whose speed drifts, whole-move figures (``app_cpu.py``, ``load.py --ceiling``) move by
more than one layer costs. This times each piece alone, in one process, in a tight loop
(``time.process_time``), so that the figures hold still:

- **Middleware, layer by layer.** The app of ``create_app`` (production's layers in production's
  order; the access log written to a file, the metrics in prometheus-client's multiprocess mode,
  as ``scripts/docker-start.sh`` runs them) with its router replaced by an answer of a move's
  size, called with a move's request: an API move (bearer token, JSON, ``Idempotency-Key``) and
  a board move (session cookie, CSRF token, form). A layer's cost is the chain from it inward
  less the chain from the next one inward (medians of ``--rounds`` rounds). The moves' lane
  (app/web/http/lane.py), which serves both moves in place of the layers, is timed on its own
  with the same stand-in in the route's place; the layers are timed without it, as every other
  route takes them.
- **The rate limits** (with ``--redis-url``): :meth:`RateLimits.hit_all_async` of a move's rules
  (the player's windows and the address's) as a move on the event loop counts them, decided in
  the process, by 100 players in turn, with the exchange with Redis that shares the counts
  after every 25 moves (what a worker doing 500 moves/s sends every 50 ms); the client's CPU
  per move, the exchanges included.
- **The move transaction** (with ``--postgres-url``, a database it drops and recreates): what
  the move path's transaction costs around its statements on the event loop's pool (a
  connection out and back, its cursor, the check that its statements are prepared, the end),
  with no statement sent.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import itsdangerous

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import BENCH_LIMITS

Call = Callable[[], Awaitable[Any]]
# A move's answer: ~1.2 KB of JSON (the API) or ~1.5 KB of HTMX fragments (the board).
API_ANSWER = json.dumps(
    {
        "id": "g" * 22,
        "version": 12,
        "status": "playing",
        "piles": [
            {"id": f"t{i}", "cards": ["QS", "JH", "TC", "9D"], "hidden": 2} for i in range(14)
        ],
        "legal_moves": [{"from": f"t{i}", "to": f"f{i % 4 + 1}", "count": 1} for i in range(10)],
    }
).encode()
BOARD_ANSWER = (
    b'<div id="pile-t3" class="pile fanned" hx-swap-oob="true">'
    + b'<button class="card" data-card="QS" aria-label="Queen of spades"></button>' * 14
    + b'</div><p id="announce" hx-swap-oob="true">Queen of spades to the foundation.</p>'
)
CSRF = "t" * 43


def request(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80), "state": {},
    }  # fmt: skip


def shapes(session_secret: str) -> dict[str, tuple[dict[str, Any], bytes, bytes]]:
    """Each kind of move: its request (scope), its body, and its answer."""
    common = [
        (b"host", b"bench"),
        (b"accept-encoding", b"gzip, deflate, br, zstd"),
        (b"accept-language", b"en-GB,en;q=0.9"),
        (b"user-agent", b"Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0"),
    ]
    api_body = b'{"from":"t3","to":"f1","count":1,"version":11}'
    session = base64.b64encode(json.dumps({"csrf": CSRF, "player": "p" * 22}).encode())
    cookie = itsdangerous.TimestampSigner(session_secret).sign(session)
    form = f"from=t3&to=f1&count=1&version=11&move=&csrftoken={CSRF}".encode()
    api = request(
        "/api/games/" + "g" * 22 + "/moves",
        [
            *common,
            (b"content-type", b"application/json"),
            (b"content-length", str(len(api_body)).encode()),
            (b"authorization", b"Bearer " + b"k" * 43),
            (b"idempotency-key", b"0123456789abcdef0123456789abcdef"),
        ],
    )
    board = request(
        "/games/" + "g" * 22 + "/moves",
        [
            *common,
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(form)).encode()),
            (b"cookie", b"ph_session=" + cookie),
            (b"hx-request", b"true"),
            (b"sec-fetch-site", b"same-origin"),
            (b"origin", b"http://bench"),
            (b"x-csrftoken", CSRF.encode()),
        ],
    )
    return {"api": (api, api_body, API_ANSWER), "board": (board, form, BOARD_ANSWER)}


def answering(body: bytes, kind: bytes) -> Any:
    """The router's stand-in: reads the request's body and answers ``body``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


def _next(layer: Any) -> Any:
    return getattr(layer, "app", None) or getattr(layer, "plain", None)


def layers_of(stack: Any, router: Any) -> list[Any]:
    """The app's middleware, outermost first, down to (not including) FastAPI's own
    ExceptionMiddleware, which only wraps the router."""
    found = []
    node = stack
    while node is not None and node is not router and type(node).__name__ != "ExceptionMiddleware":
        found.append(node)
        node = _next(node)
    return found


def cut(layers: list[Any], inner: Any) -> None:
    """The innermost layer calls ``inner`` instead of the rest of the app; the innermost cookie
    layer both ways (its plain path and the middleware it wraps for browser routes)."""
    last = layers[-1]
    if hasattr(last, "plain"):
        last.plain = inner
        last.wrapped.app = inner
    else:
        last.app = inner


def calling(
    node: Any, scope: dict[str, Any], body: bytes, statuses: list[int] | None = None
) -> Call:
    """A call of ``node`` with a fresh copy of the request (middleware may write to its
    scope), the body in one message; the statuses answered go to ``statuses``."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if statuses is not None and message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def call() -> None:
        await node({**scope, "headers": list(scope["headers"]), "state": {}}, receive, send)

    return call


async def cpu_per_call(call: Call, n: int) -> float:
    started = time.process_time()
    for _ in range(n):
        await call()
    return (time.process_time() - started) / n * 1e6


async def middleware_costs(app: Any, args: argparse.Namespace) -> dict[str, Any]:
    from app.web.http.lane import MoveLane

    settings = app.state.settings
    out: dict[str, Any] = {}
    for name, (scope, body, answer) in shapes(settings.session_secret).items():
        stack = app.build_middleware_stack()
        found = layers_of(stack, app.router)
        lane = next(layer for layer in found if isinstance(layer, MoveLane))
        layers = [layer for layer in found if layer is not lane]  # the stack every route takes
        kind = b"application/json" if name == "api" else b"text/html; charset=utf-8"
        inner = answering(answer, kind)
        cut(layers, inner)
        layers[layers.index(lane.app) - 1].app = lane.app  # the stack without the lane
        statuses: list[int] = []
        chain = [*layers, inner]
        await calling(chain[0], scope, body, statuses)()
        if statuses != [200]:
            raise SystemExit(f"the {name} request was not let through: {statuses}")
        rounds: list[list[float]] = [[] for _ in chain]
        lane_rounds: list[float] = []
        # The moves' lane, serving the stand-in answer in the route's place.
        lane._serve = inner  # type: ignore[method-assign]
        await calling(lane, scope, body, statuses)()
        if statuses != [200, 200]:
            raise SystemExit(f"the lane did not let the {name} move through: {statuses}")
        for _ in range(args.rounds):
            for i, node in enumerate(chain):
                rounds[i].append(await cpu_per_call(calling(node, scope, body), args.requests))
            lane_rounds.append(await cpu_per_call(calling(lane, scope, body), args.requests))
        medians = [statistics.median(r) for r in rounds]
        per_layer = {
            f"{i + 1}. {type(layer).__name__}": round(medians[i] - medians[i + 1], 1)
            for i, layer in enumerate(layers)
        }
        out[name] = {
            "middleware total µs": round(medians[0] - medians[-1], 1),
            "per layer µs": per_layer,
            "stand-in answer µs": round(medians[-1], 1),
        }
        # ServerErrorMiddleware and FastAPI's telemetry layer stay above the lane.
        above = medians[0] - medians[layers.index(lane.app)]
        out[name]["the lane (and the layers above it) µs"] = round(
            statistics.median(lane_rounds) - medians[-1] + above, 1
        )
    return out


async def rate_limit_cost(args: argparse.Namespace) -> dict[str, Any]:
    from app.config import Settings
    from app.web.http.ratelimit import RateLimits

    limits = RateLimits(
        Settings(redis_url=args.redis_url, rate_limit_prefix=f"bench-{os.getpid()}")
    )
    limits.start()
    try:
        shared = limits.shared
        assert shared is not None
        players = [
            ((limits.moves, f"{i:022d}"), (limits.address, f"127.0.0.{i % 50}")) for i in range(100)
        ]
        turn = iter(range(10**9))

        async def move() -> None:
            i = next(turn)
            await limits.hit_all_async(players[i % len(players)])
            if i % 25 == 24:
                await shared.flush()

        await cpu_per_call(move, 100)  # connects, loads the script
        costs = [await cpu_per_call(move, 1000) for _ in range(5)]
    finally:
        await limits.stop()
    return {
        "rate limits with their exchanges, client CPU µs per move": round(
            statistics.median(costs), 1
        )
    }


async def move_transaction_cost(args: argparse.Namespace) -> dict[str, Any]:
    """The move path's transaction around its statements, on the event loop's pool as a move
    runs it (``InlineMoves``, in a greenlet): a connection checked out, its cursor and prepared
    statements found, the transaction ended and the connection checked back in; no statement."""
    from load import fresh_database
    from sqlalchemy.util import greenlet_spawn

    from app.db.move_store import InlineMoves, Transactions
    from app.db.session import make_engine, make_inline_move_engine

    fresh_database(args.postgres_url)  # its statements are prepared on the app's own tables
    engine = make_engine(args.postgres_url, pool_size=4)
    inline_engine = make_inline_move_engine(engine)
    assert inline_engine is not None
    inline = InlineMoves.of(inline_engine)

    def transactions(transaction: Transactions, n: int) -> None:
        for _ in range(n):
            with transaction():
                pass

    async def hundred() -> None:
        await greenlet_spawn(transactions, inline.transaction, 100)

    try:
        await cpu_per_call(hundred, 5)  # connects and prepares
        costs = [await cpu_per_call(hundred, max(1, args.requests // 100)) / 100 for _ in range(5)]
    finally:
        await inline_engine.dispose()
        engine.dispose()
    return {"the move transaction's set-up and end, CPU µs": round(statistics.median(costs), 1)}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    from app.config import get_settings
    from app.main import create_app
    from app.web.http import observe

    app = create_app(get_settings())
    # JSON lines to a file, as production's stderr goes to one (not to this terminal).
    log_file = Path(args.workdir) / "app.log"
    handler = logging.StreamHandler(log_file.open("a"))
    handler.setFormatter(observe.JsonFormatter())
    root = logging.getLogger("patience_hall")
    root.handlers[:] = [handler]
    result = {"middleware": await middleware_costs(app, args)}
    if args.redis_url:
        result["redis"] = await rate_limit_cost(args)
    if args.postgres_url:
        result["postgres"] = await move_transaction_cost(args)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=5, help="timings per layer (the median)")
    parser.add_argument(
        "--redis-url", default="redis://127.0.0.1:6379/15", help="empty: skip the rate limit"
    )
    parser.add_argument(
        "--postgres-url",
        default="postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_fixed",
        help="dropped and recreated; empty: skip the move transaction",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ph-fixed-") as workdir:
        args.workdir = workdir
        metrics = Path(workdir) / "metrics"
        metrics.mkdir()
        os.environ.update(BENCH_LIMITS)
        os.environ.update(
            {
                "APP_ENV": "development",
                "DATABASE_URL": f"sqlite:///{workdir}/unused.db",  # the router never runs
                "JSON_LOGS": "true",
                "PROMETHEUS_MULTIPROC_DIR": str(metrics),
                "REDIS_URL": "",
            }
        )
        try:
            import uvloop

            result = uvloop.run(measure(args))
        except ImportError:
            result = asyncio.run(measure(args))
    print(json.dumps({"load average": os.getloadavg(), **result}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
