"""The floor under an API move: the raw ceiling's move inside what the app must do around
every move, level by level, to tell which part of the app's cost is its own choice.

    .venv/bin/python bench/move_floor.py --port 9951 [--workers 2] [--pool-size 5]

Issue 26 asks for an API move at ≥ 0.8 × the raw ceiling (bench/raw_ceiling.py: Starlette,
psycopg's async pool, a move's reads and writes, nothing else), and keeps FastAPI and every
behaviour of the contract. Some of what the app does around a move is therefore not its choice:
a log line and metrics for every request, the security headers, compression for a browser's
``Accept-Encoding``, admission (issues 12, 15, 16, 24, 26), the bearer token's owner, a body
checked as the contract describes it, per-player rate limits shared by every process (issue 16),
and the rules engine that is the product. This server is the app itself (``create_app`` with the
production settings of its environment, served by ``python -m app.serve`` with production's
options) with four more routes, each one more layer of those around the raw ceiling's move
as the app sends its own (``raw_ceiling.raw_move_messages``: two messages of client-side-bound
text, each statement prepared once per connection):

- ``POST /api/floor/{game_id}/stack``: that move behind the app's whole middleware stack and
  FastAPI's routing, served as the app's API move route is (placed just before it, Starlette's
  ``request_response`` around a direct handler, as app/web/direct.py serves it);
- ``POST /api/floor/{game_id}/checks``: also the body read as the API's ``MoveRequest`` and the
  bearer token's owner (``api_player_id``), as the API move's binder does before its route;
- ``POST /api/floor/{game_id}/gates``: also the per-player and per-address rate limits, as the
  API move counts them before its transaction (``limit_player_async``: decided in the process,
  shared with Redis in batches since 2026-11-28; one Redis round trip before);
- ``POST /api/floor/{game_id}/engine``: also the rules, with the app's own two messages (every
  column of the game row locked, the move log's answer stored): the owner and version checked,
  the requested move applied by the engine (``Ruleset.step``), the legal moves after it, the
  new state, and the app's own answer (``GameView``, ``answer_text``).

None of them runs the app's services (``Games``, ``GameActions``: the policies, the clock, the
statistics, races) or SQLAlchemy (its pool, the greenlet): what the app spends beyond the
``engine`` level is theirs. The ``engine`` level does less than a move (a game that ends is not
scored, its status not written), so it is a floor, not a replacement. ``bench/load.py
--ceiling --floor`` starts it beside the app and the raw ceiling and runs its levels in the same
alternation. It binds 127.0.0.1 only and runs until stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi import FastAPI
from fastapi.routing import APIRoute, request_response
from psycopg import AsyncClientCursor, AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool
from raw_ceiling import prepare_raw, raw_move_messages
from sqlalchemy.dialects.postgresql import psycopg as pg_psycopg
from starlette.requests import Request
from starlette.responses import Response

from app.config import get_settings
from app.db.game_rows import game_values, move_values
from app.db.move_sql import PostgresStatements
from app.db.move_store import locked_from_row
from app.engine import IllegalMove, InvalidMove, Move, dumps, get_ruleset, loads
from app.main import create_app
from app.serve import main as serve  # also names app.serve's protocol "httptools", in workers too
from app.services.game_views import GameView
from app.web.api.games import MoveRequest
from app.web.api.schemas.game_state import answer_text
from app.web.deps import api_player_id
from app.web.http.ratelimit import limit_player_async
from app.web.state import services_of

HOST = "127.0.0.1"
API_MOVE = "/api/games/{game_id}/moves"
# The app's own statements and messages on PostgreSQL (app/db/move_sql.py).
STATEMENTS = PostgresStatements.compile(pg_psycopg.dialect())  # type: ignore[no-untyped-call]


def _json(body: bytes, status: int = 200) -> Response:
    return Response(body, status, media_type="application/json")


class Floor:
    """The four levels' handlers on a psycopg pool of their own, opened on first use (on the
    worker's loop), its connections as the app's move path has them: autocommit, client-side
    binding, the raw ceiling's statements and the app's prepared on each (``_prepare``)."""

    def __init__(self, url: str, size: int) -> None:
        # As bench/raw_ceiling.py's: small while idle (max_idle), within PostgreSQL's limit.
        self.pool = AsyncConnectionPool(
            url,
            min_size=2,
            max_size=size,
            max_idle=10,
            open=False,
            kwargs={"autocommit": True, "prepare_threshold": None},
            configure=_prepare,
        )
        self._opened = False
        self._opening = asyncio.Lock()

    async def _ready(self) -> AsyncConnectionPool:
        if not self._opened:
            async with self._opening:
                if not self._opened:
                    await self.pool.open(wait=True)
                    self._opened = True
        return self.pool

    async def stack(self, request: Request) -> Response:
        body = json.loads(await request.body())
        key = request.headers.get("idempotency-key")
        pool = await self._ready()
        game_id = request.path_params["game_id"]
        status, answer = await raw_move_messages(pool, game_id, body, key)
        return _json(answer, status)

    async def _checks(self, request: Request) -> tuple[MoveRequest, str]:
        # A body the API would refuse raises: a 500 here, where the players send none.
        body = MoveRequest.model_validate(json.loads(await request.body()))
        player = await api_player_id(request, services_of(request).players)
        return body, player

    async def _gates(self, request: Request) -> tuple[MoveRequest, str]:
        body, player = await self._checks(request)
        await limit_player_async(request, "moves", player)
        return body, player

    async def checks(self, request: Request) -> Response:
        return await self._raw_after(request, self._checks)

    async def gates(self, request: Request) -> Response:
        return await self._raw_after(request, self._gates)

    async def _raw_after(
        self, request: Request, before: Callable[[Request], Awaitable[tuple[MoveRequest, str]]]
    ) -> Response:
        body, _ = await before(request)
        key = request.headers.get("idempotency-key")
        raw = {"from": body.from_, "to": body.to, "version": body.version}
        pool = await self._ready()
        game_id = request.path_params["game_id"]
        status, answer = await raw_move_messages(pool, game_id, raw, key)
        return _json(answer, status)

    async def engine(self, request: Request) -> Response:
        body, player = await self._gates(request)
        key = request.headers.get("idempotency-key")
        game_id = request.path_params["game_id"]
        pool = await self._ready()
        async with pool.connection() as conn:
            cursor = AsyncClientCursor(conn)
            try:
                return await self._engine_move(cursor, game_id, player, body, key)
            finally:
                if conn.info.transaction_status != TransactionStatus.IDLE and not conn.closed:
                    await conn.execute("ROLLBACK")

    async def _engine_move(
        self,
        cursor: AsyncClientCursor[Any],
        game_id: str,
        player: str,
        body: MoveRequest,
        key: str | None,
    ) -> Response:
        # The app's first message (app/db/move_store.py, PostgresTransaction.lock).
        query = STATEMENTS.begin_and_lock
        if key is not None:
            query += "; " + STATEMENTS.first_response.execute
        await cursor.execute(query, {"game_id": game_id, "key": key})
        cursor.nextset()  # past BEGIN
        row = await cursor.fetchone()
        if row is None:
            return _json(b'{"error":{"code":"not_found"}}', 404)
        if key is not None:
            cursor.nextset()
            earlier = await cursor.fetchone()
            if earlier is not None:  # a retry: the first answer, once more
                return _json(str(earlier[0]).encode())
        found = locked_from_row(row, None)
        record, name = found.row, found.player_name
        if record.player_id != player:
            return _json(b'{"error":{"code":"not_your_game"}}', 403)
        if body.version != record.version:
            return _json(b'{"error":{"code":"stale_version"}}', 409)
        rules = get_ruleset(record.game)
        move = Move(body.from_, body.to, body.count)
        try:
            step = rules.step(loads(record.state), move)
        except (IllegalMove, InvalidMove):
            return _json(b'{"error":{"code":"illegal_move"}}', 422)
        legal = rules.legal_moves(step.after)
        stamp = datetime.now(UTC)
        record.state = dumps(step.after)
        record.version += 1
        record.moves += 1
        record.can_undo = not step.revealed
        record.updated_at = stamp
        record.first_move_at = record.first_move_at or stamp
        view = GameView(record, name, rules, step.after, legal, step=step, max_moves=2000)
        answer = answer_text(view)
        # The app's second message: the game, the move (and its answer), COMMIT.
        move_row = move_values(
            record, "move", stamp, notation=str(move), idempotency_key=key, response=answer
        )
        await cursor.execute(STATEMENTS.write_and_commit, {**move_row, **game_values(record)})
        return _json(answer.encode())


async def _prepare(conn: AsyncConnection[Any]) -> None:
    """The raw ceiling's statements and the app's, prepared once per connection."""
    await prepare_raw(conn)
    for statement in (
        STATEMENTS.lock_game,
        STATEMENTS.first_response,
        STATEMENTS.update_game,
        STATEMENTS.insert_move,
    ):
        await conn.execute(statement.prepare)


def _route(path: str, handler: Callable[[Request], Awaitable[Response]]) -> APIRoute:
    async def endpoint(request: Request) -> Response:  # pragma: no cover - replaced below
        return await handler(request)

    route = APIRoute(path, endpoint, methods=["POST"], include_in_schema=False)
    route.app = request_response(handler)  # as app/web/direct.py serves the move routes
    return route


def create_floor_app() -> FastAPI:
    settings = get_settings()
    app = create_app(settings)
    url = settings.database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    floor = Floor(url, int(os.environ.get("FLOOR_POOL_SIZE", "10")))
    routes = app.router.routes
    at = next(i for i, r in enumerate(routes) if isinstance(r, APIRoute) and r.path == API_MOVE)
    for offset, (level, handler) in enumerate(
        (
            ("stack", floor.stack),
            ("checks", floor.checks),
            ("gates", floor.gates),
            ("engine", floor.engine),
        )
    ):
        routes.insert(at + offset, _route(f"/api/floor/{{game_id}}/{level}", handler))
    return app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool-size", type=int, default=10)
    args = parser.parse_args(argv)
    os.environ["FLOOR_POOL_SIZE"] = str(args.pool_size)
    # The app's metrics in multiprocess mode, as the production start sets them up.
    metrics = tempfile.mkdtemp(prefix="ph-floor-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics
    # The production start's uvicorn options (scripts/docker-start.sh).
    sys.argv = [
        "python -m app.serve",
        "--factory", "move_floor:create_floor_app",
        "--app-dir", str(Path(__file__).resolve().parent),
        "--host", HOST, "--port", str(args.port), "--workers", str(args.workers),
        "--http", "httptools", "--timeout-keep-alive", "5", "--no-access-log",
        "--proxy-headers", "--no-server-header",
    ]  # fmt: skip
    try:
        serve()
    finally:
        shutil.rmtree(metrics, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
