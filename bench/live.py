"""Live rooms benchmark: races with spectators, events from commit to the screen.

    .venv/bin/python bench/live.py                                # 50 rooms × 4, 200 spectators
    .venv/bin/python bench/live.py --spectators 1000 --duration 30

It starts uvicorn itself (2 workers by default, 127.0.0.1, a free port) against a freshly
created PostgreSQL database (``ph_bench_live``), so events fan out across the workers through
LISTEN/NOTIFY. It creates --rooms rooms of --racers API players each, starts a race in every
room (no countdown), and lets each racer play their game move by move with a think time
(--think-ms, ±50%; a game that ends, or reaches 200 moves and is resigned, waits for the race
to end, and then the room starts a rematch), while
--spectators event streams (``GET /rooms/{code}/events``, spread evenly over the rooms) read
every event.

For every accepted move it notes when the answer arrived (the move's transaction committed
before the server answered); each spectator notes when the move's progress event arrived.
Delivery = arrival of the event − arrival of the move's answer ("commit → event"; the event can
beat the answer, which counts as 0). It reports delivery p50/p95/p99, the events each stream
received against the events it should have, the streams still open at the end, the memory
(RSS) of each worker, and moves/s with their p50/p99 latency, like bench/load.py.
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
from pathlib import Path
from typing import Any

from common import HOST, free_port, local_postgres, machine_facts, start_server, stop_server
from load import (
    Connection,
    ConnectionLost,
    _children,
    _is_worker,
    choose,
    fresh_database,
    percentile,
    wait_until_up,
)

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_live"


@dataclass
class Live:
    port: int
    think: float
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    measuring: bool = False
    answered: dict[tuple[str, int], float] = field(default_factory=dict)  # (game, moves) → t
    move_latency: list[float] = field(default_factory=list)
    moves: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    delivery: list[float] = field(default_factory=list)
    late_unmatched: int = 0  # progress events whose move answer was never seen
    streams_open: int = 0
    streams_failed: int = 0
    events_received: int = 0
    errors: list[str] = field(default_factory=list)


async def api(
    live: Live, conn: Connection, method: str, path: str, body: Any, token: str
) -> tuple[int, Any]:
    try:
        status, data = await conn.request(method, path, body, token)
    except (ConnectionLost, OSError) as exc:
        live.errors.append(f"{path}: {exc}")
        return 0, None
    if status >= 500 and len(live.errors) < 50:
        live.errors.append(f"{path}: {status} {data[:200]!r}")
    return status, json.loads(data) if data else None


async def setup_room(live: Live, tokens: list[str]) -> tuple[str, dict[str, str]]:
    """A room with these players, and a race started: (code, game id by token)."""
    conn = Connection(live.port)
    try:
        host = tokens[0]
        status, room = await api(live, conn, "POST", "/api/rooms", {"game": "corners"}, host)
        assert status == 201, (status, room)
        code = room["code"]
        for token in tokens[1:]:
            status, room = await api(live, conn, "POST", f"/api/rooms/{code}/join", None, token)
            assert status == 200, (status, room)
        status, room = await api(live, conn, "POST", f"/api/rooms/{code}/start", None, host)
        assert status == 200, (status, room)
        names = {p["name"] for p in room["players"]}
        assert len(names) == len(tokens)
        return code, room["race"]["games"]
    finally:
        await conn.close()


async def racer(
    live: Live, code: str, name: str, token: str, games: dict[str, str], seed: int
) -> None:
    rng = random.Random(seed)
    conn = Connection(live.port)
    try:
        game_id = games[name]
        status, game = await api(live, conn, "GET", f"/api/games/{game_id}", None, token)
        while not live.stop.is_set():
            await asyncio.sleep(live.think * rng.uniform(0.5, 1.5))
            if game is None or game["status"] != "playing" or game["moves"] >= 200:
                if game is not None and game["status"] == "playing":
                    await api(live, conn, "POST", f"/api/games/{game_id}/resign", None, token)
                # Wait for the race to end, then ask for a rematch (only one start wins).
                status, room = await api(live, conn, "GET", f"/api/rooms/{code}", None, token)
                if room and room["status"] == "open":
                    await api(live, conn, "POST", f"/api/rooms/{code}/start", None, token)
                status, room = await api(live, conn, "GET", f"/api/rooms/{code}", None, token)
                if room and room["race"] and room["race"]["status"] == "running":
                    game_id = room["race"]["games"][name]
                    status, game = await api(
                        live, conn, "GET", f"/api/games/{game_id}", None, token
                    )
                continue
            move = choose(game["legal_moves"], rng)
            body = {**move, "version": game["version"]}
            started = time.perf_counter()
            status, answer = await api(
                live, conn, "POST", f"/api/games/{game_id}/moves", body, token
            )
            done = time.perf_counter()
            if live.measuring:
                live.statuses[status] += 1
                live.move_latency.append(done - started)
            if status == 200:
                live.moves += live.measuring
                live.answered[(game_id, answer["moves"])] = done
                game = answer
            else:
                status, game = await api(live, conn, "GET", f"/api/games/{game_id}", None, token)
    finally:
        await conn.close()


async def spectator(live: Live, code: str) -> None:
    """One event stream of a room, read to the end of the run."""
    try:
        reader, writer = await asyncio.open_connection(HOST, live.port)
    except OSError as exc:
        live.streams_failed += 1
        live.errors.append(f"stream: {exc}")
        return
    request = f"GET /rooms/{code}/events HTTP/1.1\r\nHost: {HOST}\r\n\r\n"
    writer.write(request.encode())
    counted = False
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            live.streams_failed += 1
            live.errors.append(f"stream: {head[:100]!r}")
            return
        live.streams_open += 1
        counted = True
        event, data = "", ""
        while not live.stop.is_set():
            line = (await reader.readline()).decode().rstrip("\r\n")
            if not line:
                continue
            # The body is chunked: a chunk-size line precedes each piece; SSE lines are ours.
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "progress":
                data = line[6:]
                arrived = time.perf_counter()
                progress = json.loads(data)
                live.events_received += 1
                key = (progress["game"], progress["moves"])
                sent = live.answered.get(key)
                if sent is None:
                    # The event beat the move's answer to the client: commit → event ≈ 0.
                    await asyncio.sleep(0.05)
                    sent = live.answered.get(key)
                    if sent is None:
                        live.late_unmatched += 1
                        continue
                if live.measuring:
                    live.delivery.append(max(0.0, arrived - sent))
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        if not live.stop.is_set():
            live.errors.append(f"stream closed: {exc}")
    finally:
        if counted:
            live.streams_open -= 1
        writer.close()


async def named_players(port: int, count: int) -> tuple[list[str], list[str]]:
    """API players with known names (a race maps names to games): (names, tokens)."""
    run = f"{random.randrange(16**4):04x}"
    names = [f"lv{run}_{i}" for i in range(count)]
    tokens = []
    conn = Connection(port)
    try:
        for name in names:
            status, data = await conn.request("POST", "/api/players", {"name": name})
            if status != 201:
                raise RuntimeError(f"POST /api/players answered {status}: {data[:200]!r}")
            tokens.append(str(json.loads(data)["token"]))
    finally:
        await conn.close()
    return names, tokens


def worker_memory(server_pid: int) -> dict[str, float]:
    out = {}
    for pid in _children(server_pid):
        if not _is_worker(pid):
            continue
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out[str(pid)] = round(int(line.split()[1]) / 1024, 1)
    return out


def established(port: int) -> int:
    """TCP connections established to the server's port (from /proc/net/tcp)."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        local_port = int(parts[1].split(":")[1], 16)
        if local_port == port and parts[3] == "01":
            count += 1
    return count


async def benchmark(args: argparse.Namespace, port: int, server_pid: int) -> dict[str, Any]:
    live = Live(port, args.think_ms / 1000)
    names, tokens = await named_players(port, args.rooms * args.racers)
    rooms = []
    for i in range(args.rooms):
        group = list(range(i * args.racers, (i + 1) * args.racers))
        code, games = await setup_room(live, [tokens[j] for j in group])
        rooms.append((code, games, group))
    watchers = [
        asyncio.create_task(spectator(live, rooms[i % len(rooms)][0]))
        for i in range(args.spectators)
    ]
    await asyncio.sleep(2)  # the streams open
    racers = [
        asyncio.create_task(racer(live, code, names[j], tokens[j], games, args.seed + j))
        for code, games, group in rooms
        for j in group
    ]
    await asyncio.sleep(args.warmup)
    live.measuring = True
    t0 = time.perf_counter()
    await asyncio.sleep(args.duration)
    live.measuring = False
    elapsed = time.perf_counter() - t0
    memory = worker_memory(server_pid)
    held = established(port)
    open_streams = live.streams_open
    live.stop.set()
    for task in racers + watchers:
        task.cancel()
    await asyncio.gather(*racers, *watchers, return_exceptions=True)
    ms = 1000.0
    return {
        "rooms": args.rooms,
        "racers": args.rooms * args.racers,
        "spectators": args.spectators,
        "workers": args.workers,
        "moves/s": round(live.moves / elapsed, 1),
        "move p50 (ms)": round(percentile(live.move_latency, 0.5) * ms, 1),
        "move p99 (ms)": round(percentile(live.move_latency, 0.99) * ms, 1),
        "move statuses": dict(live.statuses),
        "delivery p50 (ms)": round(percentile(live.delivery, 0.5) * ms, 1),
        "delivery p95 (ms)": round(percentile(live.delivery, 0.95) * ms, 1),
        "delivery p99 (ms)": round(percentile(live.delivery, 0.99) * ms, 1),
        "deliveries measured": len(live.delivery),
        "progress events received": live.events_received,
        "events without a seen answer": live.late_unmatched,
        "streams open at the end": open_streams,
        "streams failed": live.streams_failed,
        "TCP connections held by the server": held,
        "worker RSS (MiB)": memory,
        "errors": live.errors[:10],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--racers", type=int, default=4, help="players per room")
    parser.add_argument("--spectators", type=int, default=200, help="event streams")
    parser.add_argument("--think-ms", type=float, default=1000, help="mean pause per move")
    parser.add_argument("--duration", type=float, default=30, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.rooms * args.racers <= 2000 or not 0 <= args.spectators <= 5000:
        parser.error("at most 2000 racers and 5000 spectators")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    local_postgres(args.database_url, "benchmark")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 2 * (args.spectators + args.rooms * args.racers) + 200))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    signal.signal(signal.SIGTERM, lambda s, f: (_ for _ in ()).throw(KeyboardInterrupt()))
    fresh_database(args.database_url)
    facts = machine_facts(args.database_url)
    port = free_port()
    log = Path(tempfile.mkstemp(prefix="ph-live-server-", suffix=".log")[1])
    settings = {
        "RACE_COUNTDOWN_S": "0",
        "ROOMS_PER_PLAYER": "5",
        "ROOM_MAX_MEMBERS": str(max(8, args.racers)),
    }
    server = start_server(args.database_url, port, args.workers, log, env=settings)
    try:

        async def go() -> dict[str, Any]:
            await wait_until_up(port, server, log)
            return await benchmark(args, port, server.pid)

        result = asyncio.run(go())
    except KeyboardInterrupt:
        print("interrupted: stopping the server", file=sys.stderr)
        return 130
    finally:
        stop_server(server)
    result["machine"] = facts
    result["command"] = "python bench/live.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(json.dumps(result, indent=2))
    print(f"server log: {log}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    failed = any(int(s) >= 500 or int(s) == 0 for s in result["move statuses"])
    return 1 if failed or result["streams failed"] else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
