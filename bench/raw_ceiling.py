"""The raw ceiling of a move: what the database allows, with nothing of the app around it.

    .venv/bin/python bench/raw_ceiling.py --port 9950 --database-url URL [--workers 2]

A bare Starlette app on psycopg 3's async pool (one connection pool per worker, the event loop
never leaves for a thread) that does the same reads and writes on the app's own tables as a
move of the app: in one transaction, lock the game row (joined to its player, as the app's
``LOCK_GAME`` does), look the ``Idempotency-Key`` up in the move log, check the version, update
the game (every column a move writes, the state written back as it was read), insert the move
(with the answer, when there is a key), commit; and it answers ~1.3 KB of JSON. Two round trips
as the app's PostgreSQL move path: ``BEGIN; SELECT … FOR UPDATE; SELECT first answer`` in one
pipeline, ``UPDATE; INSERT; COMMIT`` in the other. No rules engine, no middleware, no
validation beyond the version: a ceiling, not a server.

``POST /raw/games/{id}/moves`` takes ``{"from", "to", "version"}`` (and ``Idempotency-Key``);
``200`` with the new version, ``409`` with the current one when ``version`` is stale, ``404``
for an unknown game. A retry with a key gets the first answer.

``POST /raw/messages/games/{id}/moves`` does the same with the same statements sent as the
app's PostgreSQL move path sends its own (app/db/move_sql.py): prepared once per connection and
run by name, in two messages of client-side-bound text (``BEGIN``, the lock and the key's
lookup; the update, the insert and ``COMMIT``), on a pool of its own; ``bench/load.py --ceiling
--floor`` measures both ways. It binds 127.0.0.1 only and is started and stopped by
``bench/load.py --ceiling`` (it runs until stopped).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from psycopg import AsyncClientCursor, AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

HOST = "127.0.0.1"

LOCK = (
    "SELECT g.id, g.state, g.version, g.status, g.moves, g.undos, g.rated, g.first_move_at,"
    " g.active_ms, g.updated_at, g.race_id, g.not_before, p.name"
    " FROM game g JOIN player p ON p.id = g.player_id WHERE g.id = %s FOR UPDATE OF g"
)
FIRST = (
    "SELECT response, action, notation, seq FROM move WHERE game_id = %s AND idempotency_key = %s"
)
UPDATE = (
    "UPDATE game SET rated = %s, state = %s, version = %s, status = %s, moves = %s, undos = %s,"
    " can_undo = %s, updated_at = %s, first_move_at = %s, finished_at = NULL,"
    " duration_ms = NULL, active_ms = %s WHERE id = %s"
)
INSERT = (
    "INSERT INTO move (game_id, seq, action, notation, revealed, created_at, idempotency_key,"
    " response, snapshot) VALUES (%s, %s, 'move', %s, false, %s, %s, %s, NULL)"
)
# The rest of an answer the size of the app's (a move's JSON is ~1.3 KB: piles, legal moves).
_PILES = [{"id": f"t{i}", "cards": ["QS", "JH", "10C"], "hidden": 2} for i in range(8)]
_LEGAL = [{"from": f"t{i}", "to": f"f{i % 4 + 1}", "count": 1} for i in range(8)]


def _answer(game_id: str, version: int, moves: int, status: str) -> bytes:
    return json.dumps(
        {
            "id": game_id,
            "version": version,
            "status": status,
            "moves": moves,
            "piles": _PILES,
            "legal_moves": _LEGAL,
        },
        separators=(",", ":"),
    ).encode()


def _json(body: bytes, status: int = 200) -> Response:
    return Response(body, status, media_type="application/json")


@dataclass(frozen=True)
class Write:
    """What a move writes once its row is locked: the answer and the two statements' values."""

    answer: bytes
    update: tuple[Any, ...]
    insert: tuple[Any, ...]


def _decide(
    game_id: str, body: dict[str, Any], key: str | None, row: Any, earlier: Any
) -> tuple[int, bytes] | Write:
    """Between the lock and the write, either way: a refusal or a retry's first answer (a
    status and a body, nothing written), or the move's :class:`Write`."""
    if row is None:
        return 404, b'{"error":{"code":"not_found"}}'
    if earlier is not None:  # a retry: the first answer, once more
        return 200, str(earlier[0]).encode()
    (_, state, version, status, moves, undos, rated, first_move_at, active_ms) = row[:9]
    if body.get("version") != version:
        return 409, json.dumps({"version": version}).encode()
    stamp = datetime.now(UTC)
    answer = _answer(game_id, version + 1, moves + 1, status)
    notation = f"{body['from']}-{body['to']}"
    return Write(
        answer,
        (
            rated, state, version + 1, status, moves + 1, undos, True, stamp,
            first_move_at or stamp, active_ms, game_id,
        ),
        (game_id, version + 1, notation, stamp, key, answer.decode() if key is not None else None),
    )  # fmt: skip


async def raw_move(
    pool: AsyncConnectionPool, game_id: str, body: dict[str, Any], key: str | None
) -> tuple[int, bytes]:
    """The ceiling's move on ``pool``, in psycopg's pipeline: its status and its answer."""
    async with pool.connection() as conn:
        try:
            async with conn.pipeline() as pipe:
                await conn.execute("BEGIN")
                locked = await conn.execute(LOCK, (game_id,), prepare=True)
                first = None
                if key is not None:
                    first = await conn.execute(FIRST, (game_id, key), prepare=True)
                await pipe.sync()
                row = await locked.fetchone()
                earlier = await first.fetchone() if first is not None else None
            decided = _decide(game_id, body, key, row, earlier)
            if not isinstance(decided, Write):
                await conn.execute("ROLLBACK")
                return decided
            async with conn.pipeline():
                await conn.execute(UPDATE, decided.update, prepare=True)
                await conn.execute(INSERT, decided.insert, prepare=True)
                await conn.execute("COMMIT")
        except BaseException:
            if not conn.closed:
                await conn.execute("ROLLBACK")
            raise
    return 200, decided.answer


def _numbered(statement: str) -> str:
    """``%s`` placeholders as PostgreSQL's ``$1``, ``$2``, … (the body of a ``PREPARE``)."""
    parts = statement.split("%s")
    return "".join(f"{part}${i}" for i, part in enumerate(parts[:-1], 1)) + parts[-1]


# The same statements prepared once per connection and run by name in two messages of
# client-side-bound text, as the app's PostgreSQL move path sends them (app/db/move_sql.py).
PREPARED = {
    "raw_lock": LOCK,
    "raw_first": FIRST,
    "raw_update": UPDATE,
    "raw_insert": INSERT,
}


def _execute(name: str) -> str:
    return f"EXECUTE {name}({', '.join(['%s'] * PREPARED[name].count('%s'))})"


LOCK_MESSAGE = "BEGIN; " + _execute("raw_lock")
LOCK_FIRST_MESSAGE = LOCK_MESSAGE + "; " + _execute("raw_first")
WRITE_MESSAGE = f"{_execute('raw_update')}; {_execute('raw_insert')}; COMMIT"


async def prepare_raw(conn: AsyncConnection[Any]) -> None:
    for name, statement in PREPARED.items():
        await conn.execute(f"PREPARE {name} AS {_numbered(statement)}")


async def raw_move_messages(
    pool: AsyncConnectionPool, game_id: str, body: dict[str, Any], key: str | None
) -> tuple[int, bytes]:
    """:func:`raw_move` in the app's way: two messages of client-side-bound text (``BEGIN``,
    the lock and the key's lookup; the update, the insert and ``COMMIT``), each statement
    prepared once per connection (``prepare_raw``)."""
    async with pool.connection() as conn:
        cursor = AsyncClientCursor(conn)
        try:
            if key is None:
                await cursor.execute(LOCK_MESSAGE, (game_id,))
            else:
                await cursor.execute(LOCK_FIRST_MESSAGE, (game_id, game_id, key))
            cursor.nextset()  # past BEGIN
            row = await cursor.fetchone()
            earlier = None
            if key is not None:
                cursor.nextset()
                earlier = await cursor.fetchone()
            decided = _decide(game_id, body, key, row, earlier)
            if not isinstance(decided, Write):
                return decided  # rolled back below
            await cursor.execute(WRITE_MESSAGE, decided.update + decided.insert)
        finally:
            if conn.info.transaction_status != TransactionStatus.IDLE and not conn.closed:
                await conn.execute("ROLLBACK")
    return 200, decided.answer


def create_app() -> Starlette:
    url = os.environ["RAW_DATABASE_URL"]
    # Two pools, one a way: each shrinks back (max_idle) when the other way's phase runs,
    # so that two servers beside the app stay within PostgreSQL's 100 connections.
    size = int(os.environ.get("RAW_POOL_SIZE", "10"))
    pool = AsyncConnectionPool(
        url, min_size=2, max_size=size, max_idle=10, open=False, kwargs={"autocommit": True}
    )
    messages = AsyncConnectionPool(
        url, min_size=2, max_size=size, max_idle=10, open=False,
        kwargs={"autocommit": True, "prepare_threshold": None}, configure=prepare_raw,
    )  # fmt: skip

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await pool.open(wait=True)
        await messages.open(wait=True)
        try:
            yield
        finally:
            await pool.close()
            await messages.close()

    async def move(request: Request) -> Response:
        body = json.loads(await request.body())
        key = request.headers.get("idempotency-key")
        status, answer = await raw_move(pool, request.path_params["game_id"], body, key)
        return _json(answer, status)

    async def move_messages(request: Request) -> Response:
        body = json.loads(await request.body())
        key = request.headers.get("idempotency-key")
        game_id = request.path_params["game_id"]
        status, answer = await raw_move_messages(messages, game_id, body, key)
        return _json(answer, status)

    async def health(_: Request) -> Response:
        return Response(b"ok")

    return Starlette(
        routes=[
            Route("/raw/games/{game_id}/moves", move, methods=["POST"]),
            Route("/raw/messages/games/{game_id}/moves", move_messages, methods=["POST"]),
            Route("/healthz", health),
        ],
        lifespan=lifespan,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--database-url", required=True, help="the app's database (psycopg)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool-size", type=int, default=10)
    args = parser.parse_args(argv)
    url = args.database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    os.environ["RAW_DATABASE_URL"] = url
    os.environ["RAW_POOL_SIZE"] = str(args.pool_size)
    import uvicorn

    uvicorn.run(
        "raw_ceiling:create_app",
        factory=True,
        host=HOST,
        port=args.port,
        workers=args.workers,
        app_dir=str(Path(__file__).resolve().parent),
        http="httptools",
        loop="uvloop",
        access_log=False,
        log_level="warning",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
