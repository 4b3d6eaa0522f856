"""Events benchmark: one event (arena) with many players paced like people.

    .venv/bin/python bench/compete.py                       # 500 players, 2 workers
    .venv/bin/python bench/compete.py --players 100 --duration 30 --port 9731

It starts uvicorn itself (2 workers by default, 127.0.0.1) against a freshly created
PostgreSQL database (``ph_bench_compete``), marks --deals Corners deals as certified (directly
in ``deal_verdict``: which deals they are does not change the costs measured, and solving
thousands of deals first would take the machine for an hour), schedules one running event, and
lets --players API players join it. Each plays its deals of its own (``POST /api/events/{id}/
next``) move by move with a think time (--think-ms, ±50%), choosing moves like bench/load.py,
and resigns a game after --game-moves moves (or plays on to its end), then asks for the next.
--watchers event streams (``GET /events/{id}/stream``) read every ``event: standings``.

Measured, after --warmup seconds, for --duration seconds:

- **standings update**: for every game that ended, the time from the arrival of the answer that
  ended it to the arrival, on each watcher, of the first standings event that counts it (the
  player's finished games went up); p50/p95/p99 over every (game, watcher) pair;
- **moves**: latency p50/p99 of every move request, and moves/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import HOST, free_port, local_postgres, machine_facts, start_server, stop_server
from load import Connection, ConnectionLost, choose, fresh_database, percentile, wait_until_up
from sqlalchemy import create_engine, insert

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_compete"


@dataclass
class Run:
    port: int
    event: int
    think: float
    game_moves: int
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    measuring: bool = False
    move_latency: list[float] = field(default_factory=list)
    moves: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    ended: dict[tuple[str, int], float] = field(default_factory=dict)  # (player, games) → t
    ended_measured: set[tuple[str, int]] = field(default_factory=set)
    update: list[float] = field(default_factory=list)
    standings_events: int = 0
    errors: list[str] = field(default_factory=list)


def prepare(url: str, deals: int) -> int:
    """Certified deals and one event running for an hour; the event's id."""
    from app.db.models import Arena, DealVerdict

    engine = create_engine(url)
    now = datetime.now(UTC)
    try:
        with engine.begin() as db:
            db.execute(
                insert(DealVerdict),
                [
                    {"game": "corners", "deal": n, "outcome": "winnable", "solution": None,
                     "positions": 0, "certified": True, "created_at": now, "par": 100}
                    for n in range(1, deals + 1)
                ],
            )  # fmt: skip
            return int(
                db.execute(
                    insert(Arena)
                    .values(
                        game="corners",
                        starts_at=now - timedelta(minutes=1),
                        ends_at=now + timedelta(hours=1),
                        created_at=now,
                    )
                    .returning(Arena.id)
                ).scalar_one()
            )
    finally:
        engine.dispose()


async def call(run: Run, conn: Connection, method: str, path: str, body: Any, token: str) -> Any:
    try:
        status, data = await conn.request(method, path, body, token)
    except (ConnectionLost, OSError) as exc:
        run.errors.append(f"{path}: {exc}")
        return 0, None
    if status >= 500 and len(run.errors) < 50:
        run.errors.append(f"{path}: {status} {data[:200]!r}")
    return status, json.loads(data) if data else None


async def player(run: Run, name: str, token: str, seed: int, arrive_after: float) -> None:
    rng = random.Random(seed)
    conn = Connection(run.port)
    finished = 0
    await asyncio.sleep(arrive_after)
    try:
        game: Any = None
        while not run.stop.is_set():
            if game is None or game["status"] != "playing":
                status, game = await call(run, conn, "POST", f"/api/events/{run.event}/next",
                                          None, token)  # fmt: skip
                run.statuses[f"next {status}"] += 1
                if status != 201:
                    await asyncio.sleep(rng.uniform(1.0, 3.0))  # busy: back off, as a page would
                    game = None
                continue
            await asyncio.sleep(run.think * rng.uniform(0.5, 1.5))
            gid = game["id"]
            started = time.perf_counter()
            if game["moves"] >= run.game_moves or not game["legal_moves"]:
                status, answer = await call(run, conn, "POST", f"/api/games/{gid}/resign",
                                            None, token)  # fmt: skip
            else:
                move = {**choose(game["legal_moves"], rng), "version": game["version"]}
                status, answer = await call(run, conn, "POST", f"/api/games/{gid}/moves",
                                            move, token)  # fmt: skip
                if run.measuring:
                    run.move_latency.append(time.perf_counter() - started)
                    run.statuses[f"move {status}"] += 1
                    run.moves += status == 200
            done = time.perf_counter()
            if status != 200:
                status, answer = await call(run, conn, "GET", f"/api/games/{gid}", None, token)
            game = answer
            if game is not None and game["status"] != "playing":
                finished += 1
                run.ended[(name, finished)] = done
                if run.measuring:
                    run.ended_measured.add((name, finished))
    finally:
        await conn.close()


async def watcher(run: Run) -> None:
    """One standings stream, read to the end of the run."""
    reader, writer = await asyncio.open_connection(HOST, run.port)
    writer.write(f"GET /events/{run.event}/stream HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
    seen: dict[str, int] = {}
    event = ""
    try:
        await reader.readuntil(b"\r\n\r\n")
        while not run.stop.is_set():
            line = (await reader.readline()).decode().rstrip("\r\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "standings":
                arrived = time.perf_counter()
                run.standings_events += 1
                for row in json.loads(line[6:])["standings"]:
                    before = seen.get(row["player"], 0)
                    for games in range(before + 1, row["games"] + 1):
                        key = (row["player"], games)
                        sent = run.ended.get(key)
                        if sent is not None and key in run.ended_measured:
                            run.update.append(max(0.0, arrived - sent))
                    seen[row["player"]] = max(before, row["games"])
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        if not run.stop.is_set():
            run.errors.append(f"stream closed: {exc}")
    finally:
        writer.close()


async def make_players(run: Run, count: int) -> list[tuple[str, str]]:
    conn = Connection(run.port)
    out = []
    try:
        for _ in range(count):
            status, data = await conn.request("POST", "/api/players", {})
            assert status == 201, (status, data[:200])
            created = json.loads(data)
            token = str(created["token"])
            status, _ = await conn.request("POST", f"/api/events/{run.event}/join", None, token)
            assert status == 200, status
            out.append((str(created["name"]), token))
    finally:
        await conn.close()
    return out


async def benchmark(args: argparse.Namespace, port: int, event: int) -> dict[str, Any]:
    run = Run(port, event, args.think_ms / 1000, args.game_moves)
    people = await make_players(run, args.players)
    streams = [asyncio.create_task(watcher(run)) for _ in range(args.watchers)]
    await asyncio.sleep(1)
    spread = args.arrive_s  # arrivals spread over this many seconds
    tasks = [
        asyncio.create_task(player(run, name, token, args.seed + i, spread * i / len(people)))
        for i, (name, token) in enumerate(people)
    ]
    await asyncio.sleep(args.warmup)
    run.measuring = True
    t0 = time.perf_counter()
    await asyncio.sleep(args.duration)
    run.measuring = False
    elapsed = time.perf_counter() - t0
    await asyncio.sleep(3)  # the last games' standings arrive
    run.stop.set()
    for task in tasks + streams:
        task.cancel()
    await asyncio.gather(*tasks, *streams, return_exceptions=True)
    ms = 1000.0
    return {
        "players": args.players,
        "watchers": args.watchers,
        "workers": args.workers,
        "think ms": args.think_ms,
        "moves/s": round(run.moves / elapsed, 1),
        "move p50 (ms)": round(percentile(run.move_latency, 0.5) * ms, 1),
        "move p99 (ms)": round(percentile(run.move_latency, 0.99) * ms, 1),
        "games ended (measured)": len(run.ended_measured),
        "standings update p50 (ms)": round(percentile(run.update, 0.5) * ms, 1),
        "standings update p95 (ms)": round(percentile(run.update, 0.95) * ms, 1),
        "standings update p99 (ms)": round(percentile(run.update, 0.99) * ms, 1),
        "updates measured (game × watcher)": len(run.update),
        "standings events received": run.standings_events,
        "statuses": dict(run.statuses),
        "errors": run.errors[:10],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=500)
    parser.add_argument("--watchers", type=int, default=5, help="standings streams")
    parser.add_argument("--think-ms", type=float, default=3000, help="mean pause per move")
    parser.add_argument("--game-moves", type=int, default=10, help="moves, then resign")
    parser.add_argument("--deals", type=int, default=5000, help="certified deals to mark")
    parser.add_argument("--duration", type=float, default=60, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=15)
    parser.add_argument("--arrive-s", type=float, default=10, help="arrivals spread over")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=0, help="the server's port (0: any free)")
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    local_postgres(args.database_url, "benchmark")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.players)), hard))
    signal.signal(signal.SIGTERM, lambda s, f: (_ for _ in ()).throw(KeyboardInterrupt()))
    fresh_database(args.database_url)
    event = prepare(args.database_url, args.deals)
    facts = machine_facts(args.database_url)
    port = args.port or free_port()
    log = Path(tempfile.mkstemp(prefix="ph-compete-server-", suffix=".log")[1])
    server = start_server(args.database_url, port, args.workers, log)
    try:

        async def go() -> dict[str, Any]:
            await wait_until_up(port, server, log)
            return await benchmark(args, port, event)

        result = asyncio.run(go())
    except KeyboardInterrupt:
        print("interrupted: stopping the server", file=sys.stderr)
        return 130
    finally:
        stop_server(server)
    result["machine"] = facts
    result["command"] = "python bench/compete.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    print(json.dumps(result, indent=2))
    print(f"server log: {log}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
