"""Floods against a paced stream of moves: does any flood stall the table?

    .venv/bin/python bench/floods.py                      # every flood, 500 moves/s
    .venv/bin/python bench/floods.py --floods hints,streams --before 3 --during 6 --after 3
    .venv/bin/python bench/floods.py --path browser       # the movers play as browsers do

It starts the app as production does (``scripts/docker-start.sh``, 2 workers, a throwaway Redis
for their rate limits) on 127.0.0.1 (ports 9900-9999) against a freshly created database, with
the default admission settings (metered classes, per-address caps) and the rate limits raised
above what the floods do (the floods measure admission, not the per-player limits). Movers,
each with an address of its own (``X-Forwarded-For``, which the production start trusts from
127.0.0.1, as it trusts its proxy), play real games through the API at a paced total of
``--rate`` moves a second (each mover on its own schedule; a late move is sent at once, not
skipped). Then, one flood after the other, it measures the moves' p50/p99 for ``--before``
seconds, starts the flood, measures ``--during`` seconds, stops it, and measures ``--after``
seconds:

- ``hints``: 200 concurrent hint requests, over and over (200 addresses, on games in play);
- ``replays``: 200 concurrent replays of finished games (200 addresses);
- ``one-client``: one address holding 200 concurrent connections, each asking a replay of a
  game with no move, over and over;
- ``streams``: 1,000 ``view=html`` event streams of one room (each from an address of its own,
  opened before the measured window, retried after a refusal as a browser's EventSource
  does), while players join and leave the room 10 times a second; deliveries are counted and
  timed: an event's delivery time at a stream is from the moment its join or leave was sent
  (so it includes that request's own handling) to the moment the stream read the event. The
  joiner is the only source of room events in the window and acts one request at a time, so
  the n-th new event id the streams see is the n-th join or leave that succeeded.

Each flood client sends its next request as soon as its answer came (refusals included: a flood
does not wait for Retry-After). Everything it starts is stopped at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import (
    HOST,
    machine_facts,
    port_in_range,
    start_production,
    start_redis,
    stop_server,
)
from load import (
    CSRF_TOKEN,
    GAMES,
    Board,
    Connection,
    ConnectionLost,
    choose,
    cpu_report,
    cpu_snapshot,
    fresh_database,
    make_players,
    percentile,
    wait_until_up,
)
from sqlalchemy.engine import make_url

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_floods"
FLOODS = ("hints", "replays", "one-client", "streams")
# The app's own admission defaults, said out loud (bench/common.py raises the per-address caps
# for the load benchmark, whose players share 127.0.0.1).
ADMISSION = {"CLIENT_CONCURRENCY": "32", "CLIENT_STREAMS": "64"}


def address(group: int, i: int) -> dict[str, str]:
    return {"X-Forwarded-For": f"10.{group}.{i // 250}.{i % 250 + 1}"}


@dataclass
class Moves:
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # end, ms, status
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def window(self, t0: float, t1: float) -> dict[str, Any]:
        inside = [s for s in self.samples if t0 <= s[0] < t1]
        ms = [s[1] for s in inside]
        return {
            "moves_per_s": round(sum(1 for s in inside if s[2] == 200) / (t1 - t0), 1),
            "p50": round(percentile(ms, 0.5), 1),
            "p99": round(percentile(ms, 0.99), 1),
            "max": round(max(ms, default=float("nan")), 1),
            "not_200": dict(Counter(s[2] for s in inside if s[2] != 200)),
        }


async def mover(port: int, moves: Moves, token: str, n: int, interval: float) -> None:
    """One player's paced moves (start a game, move until it ends, start another)."""
    rng = random.Random(n)
    conn = Connection(port)
    headers = address(1, n)
    next_at = time.monotonic() + rng.uniform(0, interval)
    try:
        while not moves.stop.is_set():
            status, data = await conn.request(
                "POST", "/api/games", {"game": rng.choice(GAMES)}, token, headers
            )
            if status != 201:
                await asyncio.sleep(0.5)
                continue
            game = json.loads(data)
            while game["status"] == "playing" and game["legal_moves"] and not moves.stop.is_set():
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                next_at = max(next_at + interval, time.monotonic() - interval)
                move = choose(game["legal_moves"], rng)
                started = time.perf_counter()
                try:
                    status, data = await conn.request(
                        "POST",
                        f"/api/games/{game['id']}/moves",
                        {**move, "version": game["version"]},
                        token,
                        headers,
                    )
                except (ConnectionLost, OSError):
                    status, data = 0, b""
                moves.samples.append(
                    (time.monotonic(), (time.perf_counter() - started) * 1000, status)
                )
                if status == 200:
                    game = json.loads(data)
                else:
                    status, data = await conn.request(
                        "GET", f"/api/games/{game['id']}", None, token, headers
                    )
                    if status != 200:
                        break
                    game = json.loads(data)
    except (ConnectionLost, OSError):
        pass
    finally:
        await conn.close()


async def browser_mover(port: int, moves: Moves, n: int, interval: float) -> None:
    """:func:`mover` as a player in a browser plays (``--path browser``): a session cookie,
    the page's CSRF token, a form post per move answered with the board's HTMX fragments."""
    rng = random.Random(n)
    conn = Connection(port)
    headers = {**address(1, n), "Sec-Fetch-Site": "same-origin"}
    next_at = time.monotonic() + rng.uniform(0, interval)

    async def post(path: str, form: dict[str, str], token: str) -> tuple[int, bytes]:
        return await conn.request(
            "POST", path, headers={**headers, "HX-Request": "true", "X-CSRFToken": token}, form=form
        )

    try:
        status, page = await conn.request("GET", "/account", headers=headers)
        found = CSRF_TOKEN.search(page.decode("utf-8", "replace"))
        if found is None:
            print(f"browser mover {n}: no CSRF token on /account ({status})", file=sys.stderr)
            return
        token = found.group(1)
        while not moves.stop.is_set():
            status, _ = await post("/games", {"game": rng.choice(GAMES)}, token)
            if status != 303 or not conn.location.startswith("/games/"):
                await asyncio.sleep(0.5)
                continue
            status, page = await conn.request("GET", conn.location, headers=headers)
            board = Board.read(page) if status == 200 else None
            while board is not None and board.status == "playing" and board.legal:
                if moves.stop.is_set():
                    break
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                next_at = max(next_at + interval, time.monotonic() - interval)
                move = choose(board.legal, rng)
                form = {"from": move["from"], "to": move["to"], "count": str(move["count"])}
                started = time.perf_counter()
                try:
                    status, data = await post(
                        f"/games/{board.id}/moves", {**form, "version": str(board.version)}, token
                    )
                except (ConnectionLost, OSError):
                    status, data = 0, b""
                moves.samples.append(
                    (time.monotonic(), (time.perf_counter() - started) * 1000, status)
                )
                # A refusal answers with the whole current board: carry on from it.
                after = Board.read(data) if status else None
                if after is None:
                    status, page = await conn.request("GET", f"/games/{board.id}", headers=headers)
                    after = Board.read(page) if status == 200 else None
                board = after
    except (ConnectionLost, OSError):
        pass
    finally:
        await conn.close()


# -- the floods ------------------------------------------------------------------------------------


@dataclass
class Flood:
    answers: Counter[str] = field(default_factory=Counter)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    extra: dict[str, Any] = field(default_factory=dict)


async def hammer(
    port: int, flood: Flood, path: str, token: str | None, headers: dict[str, str]
) -> None:
    conn = Connection(port)
    try:
        while not flood.stop.is_set():
            try:
                status, _ = await conn.request("GET", path, None, token, headers, timeout=30)
            except (ConnectionLost, OSError):
                status = 0
                await asyncio.sleep(0.05)
            flood.answers[str(status)] += 1
    finally:
        await conn.close()


async def game_of(port: int, token: str, resign: bool) -> str:
    conn = Connection(port)
    try:
        status, data = await conn.request("POST", "/api/games", {"game": "corners"}, token)
        assert status == 201, data
        game_id = str(json.loads(data)["id"])
        if resign:
            status, data = await conn.request("POST", f"/api/games/{game_id}/resign", None, token)
            assert status == 200, data
        return game_id
    finally:
        await conn.close()


_EVENT_ID = re.compile(rb"^id: ?([0-9]+)$", re.MULTILINE)


async def stream_reader(
    port: int,
    code: str,
    n: int,
    flood: Flood,
    opened: list[int],
    delivered: list[int],
    arrivals: dict[int, list[float]],
) -> None:
    """One browser's html event stream of the room; reconnects after a refusal. ``arrivals``:
    when this stream read each event, by the event's id."""
    headers = address(5, n)
    while not flood.stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
        except OSError:
            await asyncio.sleep(1)
            continue
        try:
            writer.write(
                (
                    f"GET /rooms/{code}/events?view=html HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
                    f"Accept: text/event-stream\r\nX-Forwarded-For: {headers['X-Forwarded-For']}"
                    "\r\n\r\n"
                ).encode()
            )
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            flood.answers[f"open {status}"] += 1
            if status != 200:
                retry = 1.0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"retry-after:"):
                        retry = float(line.split(b":", 1)[1])
                writer.close()
                await asyncio.sleep(retry)
                continue
            opened[0] += 1
            pending = b""
            try:
                while not flood.stop.is_set():
                    chunk = await reader.read(65536)
                    if not chunk:
                        break
                    now = time.monotonic()
                    delivered[0] += chunk.count(b"event: room")
                    # Whole SSE events only: an id line cut in two is read with the next chunk.
                    # sse-starlette ends lines with CRLF; a CR and its LF may come apart.
                    pending = (pending + chunk).replace(b"\r\n", b"\n")
                    complete, _, pending = pending.rpartition(b"\n\n")
                    for found in _EVENT_ID.finditer(complete):
                        arrivals.setdefault(int(found.group(1)), []).append(now)
            finally:
                opened[0] -= 1
        except (OSError, asyncio.IncompleteReadError, ValueError):
            await asyncio.sleep(1)
        finally:
            writer.close()


async def joiner(
    port: int,
    code: str,
    tokens: list[str],
    flood: Flood,
    per_s: float,
    sent: list[float],
    answered: list[float],
) -> None:
    """Players join and leave the room, ``per_s`` changes a second in all; ``sent`` and
    ``answered``: when each change that succeeded was sent and answered, in order."""
    conn = Connection(port)
    inside: set[int] = set()
    i = 0
    try:
        while not flood.stop.is_set():
            started = time.monotonic()
            who = i % len(tokens)
            verb = "leave" if who in inside else "join"
            try:
                status, _ = await conn.request(
                    "POST", f"/api/rooms/{code}/{verb}", None, tokens[who], address(6, who)
                )
            except (ConnectionLost, OSError):
                status = 0
            flood.answers[f"{verb} {status}"] += 1
            if status == 200:
                sent.append(started)
                answered.append(time.monotonic())
                inside.symmetric_difference_update({who})
            i += 1
            await asyncio.sleep(max(0.0, 1 / per_s - (time.monotonic() - started)))
    finally:
        await conn.close()


async def loop_lag(stop: asyncio.Event, lags: list[tuple[float, float]]) -> None:
    """How late this process's own event loop wakes a 10 ms sleep: what its clients' timings
    (moves, deliveries) carry of the load generator itself."""
    while not stop.is_set():
        asked = time.monotonic()
        await asyncio.sleep(0.01)
        woke = time.monotonic()
        lags.append((woke, (woke - asked - 0.01) * 1000))


def lag_window(lags: list[tuple[float, float]], t0: float, t1: float) -> dict[str, float]:
    ms = [lag for at, lag in lags if t0 <= at < t1]
    return {"p50": round(percentile(ms, 0.5), 1), "p99": round(percentile(ms, 0.99), 1)}


def delivery(extra: dict[str, Any]) -> dict[str, Any]:
    """The streams' delivery times (ms) of the joiner's events: the n-th event id above the
    last one before the joiner started is the n-th change it sent (see the module doc). Also
    from the change's answer (the event is published after its commit, before or while the
    answer goes out), and the changes' own answer times."""
    ids = sorted(i for i in extra["arrivals"] if i > extra["first_live"])
    sent: list[float] = extra["sent"]
    answered: list[float] = extra["answered"]
    matched = min(len(ids), len(sent))

    def times(since: list[float]) -> list[float]:
        return [
            (arrived - since[n]) * 1000
            for n, event_id in enumerate(ids[:matched])
            for arrived in extra["arrivals"][event_id]
        ]

    def summary(ms: list[float]) -> dict[str, float]:
        return {
            "p50": round(percentile(ms, 0.5), 1),
            "p99": round(percentile(ms, 0.99), 1),
            "max": round(max(ms, default=float("nan")), 1),
        }

    from_sent = times(sent)
    return {
        "events": len(ids),
        "changes_sent": len(sent),
        "deliveries": len(from_sent),
        **summary(from_sent),
        "from_answer": summary(times(answered)),
        "change_answer_ms": summary([(a - s) * 1000 for s, a in zip(sent, answered, strict=True)]),
    }


async def start_flood(
    name: str, port: int, flood: Flood, setup: dict[str, Any]
) -> list[asyncio.Task[None]]:
    tasks: list[Any] = []
    if name == "hints":
        games, tokens = setup["playing"], setup["tokens"]
        tasks = [
            hammer(port, flood, f"/api/games/{games[i % 20]}/hint", tokens[i % 20], address(3, i))
            for i in range(200)
        ]
    elif name == "replays":
        games, tokens = setup["finished"], setup["tokens"]
        tasks = [
            hammer(port, flood, f"/api/games/{games[i % 20]}/replay", tokens[i % 20], address(4, i))
            for i in range(200)
        ]
    elif name == "one-client":
        game, token = setup["finished"][0], setup["tokens"][0]
        tasks = [
            hammer(port, flood, f"/api/games/{game}/replay", token, address(7, 0))
            for _ in range(200)
        ]
    elif name == "streams":
        opened, delivered = [0], [0]
        arrivals: dict[int, list[float]] = {}
        flood.extra = {"opened": opened, "delivered": delivered, "arrivals": arrivals, "sent": []}
        flood.extra["answered"] = []
        tasks = [
            stream_reader(port, setup["room"], i, flood, opened, delivered, arrivals)
            for i in range(1000)
        ]
    return [asyncio.create_task(t) for t in tasks]


def cores(report: dict[str, float]) -> dict[str, float]:
    """Where the machine's cores went in a phase: the app's workers, PostgreSQL, this load
    generator, anything else, and what the hypervisor stole."""
    keys = {
        "app": "uvicorn workers (cores)",
        "postgres": "postgres, all processes (cores)",
        "load generator": "load generator (cores)",
        "else": "everything else (cores)",
        "busy": "machine busy (cores)",
        "stolen": "stolen (cores)",
    }
    return {name: round(report[key], 2) for name, key in keys.items()}


async def run(args: argparse.Namespace, port: int, server_pid: int) -> dict[str, Any]:
    database = make_url(args.database_url).database or ""
    tokens = await make_players(port, args.movers + 30)
    movers_tokens, extra = tokens[: args.movers], tokens[args.movers :]
    setup: dict[str, Any] = {"tokens": extra}
    setup["playing"] = [await game_of(port, t, resign=False) for t in extra[:20]]
    setup["finished"] = [await game_of(port, t, resign=True) for t in extra[:20]]
    conn = Connection(port)
    status, data = await conn.request("POST", "/api/rooms", {"game": "corners"}, extra[20])
    await conn.close()
    assert status == 201, data
    setup["room"] = json.loads(data)["code"]

    moves = Moves()
    interval = args.movers / args.rate
    if args.path == "browser":
        movers = [
            asyncio.create_task(browser_mover(port, moves, i, interval)) for i in range(args.movers)
        ]
    else:
        movers = [
            asyncio.create_task(mover(port, moves, t, i, interval))
            for i, t in enumerate(movers_tokens)
        ]
    lags: list[tuple[float, float]] = []
    movers.append(asyncio.create_task(loop_lag(moves.stop, lags)))
    results: dict[str, Any] = {}
    try:
        await asyncio.sleep(args.warmup)
        for name in args.floods:
            t0, snap0 = time.monotonic(), cpu_snapshot(server_pid, database)
            await asyncio.sleep(args.before)
            snap_before = cpu_snapshot(server_pid, database)
            flood = Flood()
            tasks = await start_flood(name, port, flood, setup)
            join_task = None
            if name == "streams":
                # The streams open first (bounded): the window is the open streams' steady state.
                deadline = time.monotonic() + args.open_within
                while time.monotonic() < deadline and flood.extra["opened"][0] < 1000:
                    await asyncio.sleep(0.2)
                flood.extra["first_live"] = max(flood.extra["arrivals"], default=0)
                join_task = asyncio.create_task(
                    joiner(
                        port,
                        setup["room"],
                        extra[21:28],
                        flood,
                        args.joins_per_s,
                        flood.extra["sent"],
                        flood.extra["answered"],
                    )
                )
            t1, snap1 = time.monotonic(), cpu_snapshot(server_pid, database)
            if name == "streams":
                flood.extra["open_s"] = round(t1 - t0 - args.before, 1)
            print(f"{name}: measuring for {args.during:g} s", flush=True)
            await asyncio.sleep(args.during)
            t2, snap2 = time.monotonic(), cpu_snapshot(server_pid, database)
            flood.stop.set()
            if name == "streams":
                flood.extra["open_at_end"] = flood.extra["opened"][0]
                flood.extra["events_delivered"] = flood.extra["delivered"][0]
                flood.extra["delivery"] = delivery(flood.extra)
            if join_task is not None:
                tasks.append(join_task)
            _, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            t3, snap3 = time.monotonic(), cpu_snapshot(server_pid, database)
            await asyncio.sleep(args.after)
            t4, snap4 = time.monotonic(), cpu_snapshot(server_pid, database)
            results[name] = {
                "before": moves.window(t0, t0 + args.before),
                "during": moves.window(t1, t2),
                "after": moves.window(t3, t4),
                "client_lag_ms": {
                    phase: lag_window(lags, a, b)
                    for phase, (a, b) in (
                        ("before", (t0, t0 + args.before)),
                        ("during", (t1, t2)),
                        ("after", (t3, t4)),
                    )
                },
                "cores": {
                    "before": cores(cpu_report(snap0, snap_before, 1)),
                    "during": cores(cpu_report(snap1, snap2, 1)),
                    "after": cores(cpu_report(snap3, snap4, 1)),
                },
                "flood_answers": dict(flood.answers),
                **{
                    k: v
                    for k, v in flood.extra.items()
                    if k in ("open_s", "open_at_end", "events_delivered", "delivery")
                },
            }
            print(f"{name}: {json.dumps(results[name])}", flush=True)
    finally:
        moves.stop.set()
        _, pending = await asyncio.wait(movers, timeout=10)
        for task in pending:
            task.cancel()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--floods", default=",".join(FLOODS), help="comma-separated: " + ",".join(FLOODS)
    )
    parser.add_argument("--rate", type=float, default=500, help="paced moves per second, in all")
    parser.add_argument("--movers", type=int, default=50, help="players sharing the paced moves")
    parser.add_argument(
        "--path",
        choices=("api", "browser"),
        default="api",
        help="the movers play through the API, or as browsers do (form posts, HTMX fragments)",
    )
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--before", type=float, default=5)
    parser.add_argument("--during", type=float, default=10)
    parser.add_argument("--after", type=float, default=5)
    parser.add_argument("--open-within", type=float, default=30, help="streams: opening bound")
    parser.add_argument("--joins-per-s", type=float, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        type=lambda text: tuple(text.split("=", 1)),
        metavar="NAME=VALUE",
        help="a setting for the app (its environment variable), e.g. SOLVER_HINT_NODES=1000; "
        "repeatable",
    )
    parser.add_argument(
        "--client-loop",
        choices=("uvloop", "asyncio"),
        default="uvloop",
        help="this load generator's event loop (uvloop, as bench/load.py: less of the "
        "machine's CPU for the same requests)",
    )
    args = parser.parse_args(argv)
    args.floods = [f for f in args.floods.split(",") if f]
    if any(f not in FLOODS for f in args.floods):
        parser.error(f"--floods: some of {', '.join(FLOODS)}")
    if not (0 < args.rate <= 5000 and 1 <= args.movers <= 500):
        parser.error("--rate up to 5000, --movers 1..500")
    if max(args.before, args.during, args.after, args.warmup) > 120:
        parser.error("each phase at most 120 s")

    fresh_database(args.database_url)
    facts = machine_facts(args.database_url)
    log = Path(tempfile.mkstemp(prefix="ph-floods-", suffix=".log")[1])
    redis_port = port_in_range()
    redis = start_redis(redis_port, log)
    port = port_in_range()
    server = start_production(
        args.database_url, port, args.workers, log,
        redis_url=f"redis://{HOST}:{redis_port}/0", env={**ADMISSION, **dict(args.set)},
    )  # fmt: skip
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[:3]
    try:

        async def go() -> dict[str, Any]:
            await wait_until_up(port, server, log)
            return await run(args, port, server.pid)

        loop_factory = None
        if args.client_loop == "uvloop":
            import uvloop

            loop_factory = uvloop.new_event_loop
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            results = runner.run(go())
    except KeyboardInterrupt:
        print("interrupted: stopping the servers", file=sys.stderr)
        return 130
    finally:
        stop_server(server)
        stop_server(redis)
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[:3]
    print(
        f"\n== floods against {args.rate:g} paced moves/s "
        f"({args.movers} movers, {args.path} path) =="
    )
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    print("\n| Flood | Phase | Moves/s | p50 ms | p99 ms | max ms | other answers |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for name, result in results.items():
        for phase in ("before", "during", "after"):
            w = result[phase]
            print(
                f"| {name} | {phase} | {w['moves_per_s']} | {w['p50']} | {w['p99']} "
                f"| {w['max']} | {w['not_200'] or '-'} |"
            )
    for name, result in results.items():
        extra = {k: v for k, v in result.items() if k not in ("before", "during", "after")}
        print(f"{name}: {extra}")
    print(f"server log: {log}")
    if args.json:
        args.json.write_text(
            json.dumps({"machine": facts, "load": [load_before, load_after], **results}, indent=2)
        )
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
