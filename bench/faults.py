"""Faults under load: what players see while things break, and whether any move is lost.

    .venv/bin/python bench/faults.py                  # every scenario, about 3 minutes
    .venv/bin/python bench/faults.py --scenarios a,d --players 40

Local only and bounded. It starts a PostgreSQL of its own (bench/pg_instance.py: a temporary
directory, 127.0.0.1, a free port; the shared server is never touched), then the production
start script ``scripts/docker-start.sh`` with 2 workers (``APP_ENV=production``, fresh random
secrets, 127.0.0.1 and a free port), which migrates the database and serves. API players play
real games move by move (``bench/load.py``'s client and move choice), each move with an
``Idempotency-Key``; a move answered 503 or whose connection dropped is sent again with the
same key and body until it is settled, as a careful client would. Meanwhile, one after the
other:

(a) PostgreSQL is stopped (``pg_ctl stop -m fast``) for 10 s, then started;
(b) a worker is killed (``kill -9``);
(c) 200 connections ask at the same instant for the replay page of the longest game allowed
    (``MAX_MOVES_PER_GAME`` moves, played beforehand) at random steps; five such bursts, 2 s
    apart (or as soon as the last one is answered);
(d) another connection holds the row lock of a game being played (``SELECT … FOR UPDATE``)
    for 30 s.

For each it reports the answers by status, the 500s, move p50/p99, the slowest answer, and
for (a) how long after PostgreSQL was back the first move failed last. At the end it checks
the database: acknowledged moves missing from the move log (lost), moves applied that the
client was never told about (unacknowledged, applied), and moves applied twice. Everything it
started is stopped, whatever happens. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import (
    BENCH_LIMITS,
    HOST,
    ROOT,
    free_port,
    machine_facts,
    start_redis,
    stop_server,
)
from load import (
    Connection,
    ConnectionLost,
    _children,
    _is_worker,
    choose,
    make_players,
    stall_report,
    start_stall_probe,
)
from load import percentile as pct
from pg_instance import PgInstance

START = ROOT / "scripts" / "docker-start.sh"
ANSWER_TARGET = 5.0  # seconds: every request answered within this
MOVE_P99_TARGET = 0.250  # seconds, during (c) and (d)
RECOVERY_TARGET = 5.0  # seconds after PostgreSQL is back


class KeyedConnection(Connection):
    """load.py's keep-alive client, each answer awaited at most 15 s unless told otherwise."""

    async def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 15.0,
    ) -> tuple[int, bytes]:
        return await self.request(method, path, body, token, headers, timeout)


@dataclass
class Sample:
    kind: str  # move, read, start, resign, replay
    status: int  # 0: no answer (connection lost or timed out)
    started: float
    latency: float
    game: str = ""  # the game of a move


@dataclass
class Run:
    port: int
    think: float
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    samples: list[Sample] = field(default_factory=list)
    acked: dict[str, str] = field(default_factory=dict)  # Idempotency-Key -> game id
    unsettled: dict[str, str] = field(default_factory=dict)  # keys never answered 200/4xx
    errors: list[str] = field(default_factory=list)

    async def call(
        self, conn: KeyedConnection, kind: str, method: str, path: str, body: Any = None,
        token: str | None = None, headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:  # fmt: skip
        started = time.monotonic()
        game = path.split("/")[3] if kind == "move" else ""
        try:
            status, data = await conn.send(method, path, body, token, headers)
        except (ConnectionLost, OSError) as exc:
            self.samples.append(Sample(kind, 0, started, time.monotonic() - started, game))
            if len(self.errors) < 30:
                self.errors.append(f"{kind}: {exc}")
            return 0, None
        self.samples.append(Sample(kind, status, started, time.monotonic() - started, game))
        if status >= 500 and status != 503 and len(self.errors) < 30:
            self.errors.append(f"{kind} {path}: {status} {data[:200]!r}")
        if kind == "replay":
            return status, None
        try:
            return status, json.loads(data) if data else None
        except ValueError:
            return status, None


async def player(run: Run, token: str, seed: int) -> None:
    rng = random.Random(seed)
    conn = KeyedConnection(run.port)
    await asyncio.sleep(rng.uniform(0, 2))
    try:
        while not run.stop.is_set():
            status, game = await run.call(
                conn, "start", "POST", "/api/games", {"game": rng.choice(GAMES)}, token
            )
            if status != 201:
                await asyncio.sleep(0.5)
                continue
            while game["status"] == "playing" and not run.stop.is_set():
                await asyncio.sleep(run.think * rng.uniform(0.5, 1.5))
                if game["moves"] >= 150:  # keep games short: many games, many rows
                    await run.call(conn, "resign", "POST", f"/api/games/{game['id']}/resign",
                                   None, token)  # fmt: skip
                    break
                game = await settle_move(run, conn, token, game, rng) or game
    finally:
        await conn.close()


async def settle_move(
    run: Run, conn: KeyedConnection, token: str, game: dict[str, Any], rng: random.Random
) -> dict[str, Any] | None:
    """One move, sent again with the same key until it is settled; the board after it."""
    key = uuid.uuid4().hex
    body = {**choose(game["legal_moves"], rng), "version": game["version"]}
    path = f"/api/games/{game['id']}/moves"
    run.unsettled[key] = game["id"]
    give_up = time.monotonic() + 40
    while True:
        status, answer = await run.call(
            conn, "move", "POST", path, body, token, {"Idempotency-Key": key}
        )
        if status == 200:
            run.unsettled.pop(key, None)
            run.acked[key] = game["id"]
            return dict(answer)
        if status in (0, 502, 503, 504) and time.monotonic() < give_up:
            await asyncio.sleep(0.5)
            continue
        if 400 <= status < 500:
            run.unsettled.pop(key, None)  # refused: nothing applied; read the board again
        status, board = await run.call(conn, "read", "GET", f"/api/games/{game['id']}", None)
        return dict(board) if status == 200 else None


GAMES = ("quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs")


# -- the longest game allowed -------------------------------------------------------------------


async def longest_game(port: int, token: str) -> tuple[str, int, int]:
    """A Quadrangle game played to the move cap: cards shuffled between tableau piles.
    Returns its id, its moves and its deal number."""
    conn = KeyedConnection(port)
    rng = random.Random(7)
    try:
        while True:
            status, data = await conn.send("POST", "/api/games", {"game": "quadrangle"}, token)
            game = json.loads(data)
            while game["status"] == "playing":
                legal = game["legal_moves"]
                shuffle = [m for m in legal if m["from"] != "stock" and m["to"][0] != "f"]
                move = rng.choice(shuffle or legal)
                status, data = await conn.send(
                    "POST", f"/api/games/{game['id']}/moves",
                    {**move, "version": game["version"]}, token,
                )  # fmt: skip
                if status != 200:
                    raise RuntimeError(f"building the long game: {status} {data[:200]!r}")
                game = json.loads(data)
            if game.get("ended_by") == "move_limit":
                return game["id"], game["moves"], game["deal"]
    finally:
        await conn.close()


def finisher_cookie(port: int, slug: str, deal: int) -> str:
    """The session cookie of a browser player who has played and resigned a game of ``deal``.

    Replays are shown only to players who have finished the deal (same-deal rule), so the
    flood of (c) asks as such a player: every request is one the app must really render,
    not a cheap 403."""
    conn = http.client.HTTPConnection(HOST, port, timeout=15)
    cookie = ""

    def call(method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str]:
        nonlocal cookie
        body = "&".join(f"{k}={v}" for k, v in (form or {}).items())
        headers = {"Cookie": cookie} if cookie else {}
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body if form is not None else None, headers=headers)
        answer = conn.getresponse()
        text = answer.read().decode(errors="replace")
        for name, value in answer.getheaders():
            if name.lower() == "set-cookie" and value.startswith("ph_session="):
                cookie = value.split(";", 1)[0]
        return answer.status, answer.getheader("location") or text

    try:
        _, page = call("GET", f"/deal/{slug}/{deal}")
        found = re.search(r'name="csrftoken" value="([^"]+)"', page)
        if found is None:
            raise RuntimeError("no CSRF token on the deal page")
        csrf = found.group(1)
        status, where = call("POST", "/games", {"csrftoken": csrf, "game": slug, "deal": str(deal)})
        if status != 303 or not where.startswith("/games/"):
            raise RuntimeError(f"starting the deal in a browser: {status} {where[:200]!r}")
        status, where = call("POST", f"{where}/resign", {"csrftoken": csrf})
        if status != 303:
            raise RuntimeError(f"resigning in a browser: {status} {where[:200]!r}")
        return cookie
    finally:
        conn.close()


async def replay_bursts(
    run: Run, game_id: str, moves: int, bursts: int, every: float, clients: int, cookie: str
) -> None:
    """``bursts`` times, ``clients`` connections each ask at the same instant for the replay
    page at a random step (so that nothing is served from a cache of states), as a player
    allowed to see it."""
    conns = [KeyedConnection(run.port) for _ in range(clients)]
    rng = random.Random(3)
    try:
        for _ in range(bursts):
            started = time.monotonic()
            await asyncio.gather(
                *(
                    run.call(
                        c,
                        "replay",
                        "GET",
                        f"/games/{game_id}/replay?step={rng.randint(0, moves)}",
                        headers={"Cookie": cookie},
                    )
                    for c in conns
                )
            )
            await asyncio.sleep(max(0.0, every - (time.monotonic() - started)))
    finally:
        await asyncio.gather(*(c.close() for c in conns))


# -- faults --------------------------------------------------------------------------------------


async def hold_row_lock(url: str, game_id: str, seconds: float) -> None:
    import psycopg

    plain = url.replace("postgresql+psycopg://", "postgresql://")
    conn = await psycopg.AsyncConnection.connect(plain)
    try:
        async with conn.transaction():
            await conn.execute("SELECT 1 FROM game WHERE id = %s FOR UPDATE", (game_id,))
            await asyncio.sleep(seconds)
    finally:
        await conn.close()


def game_in_play(url: str) -> str:
    import psycopg

    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain) as conn:
        row = conn.execute(
            "SELECT id FROM game WHERE status = 'playing' ORDER BY updated_at DESC LIMIT 1"
        ).fetchone()
    assert row is not None, "no game in play"
    return str(row[0])


def kill_a_worker(server: subprocess.Popen[bytes]) -> int:
    workers = [p for p in _children(server.pid) if _is_worker(p)]
    victim = workers[0]
    os.kill(victim, signal.SIGKILL)
    return victim


# -- the report ----------------------------------------------------------------------------------


def window_report(run: Run, t0: float, t1: float, spare: str = "") -> dict[str, Any]:
    """The answers to requests sent between t0 and t1; the moves without those of ``spare``
    (the locked game of (d), whose moves can only wait for the lock and give up)."""
    inside = [s for s in run.samples if t0 <= s.started < t1]
    moves = [s for s in inside if s.kind == "move" and s.game != spare]
    ok_moves = [s.latency for s in moves if s.status == 200]
    return {
        "answers": dict(sorted(Counter(str(s.status) for s in inside).items())),
        "500s": sum(1 for s in inside if s.status == 500),
        "5xx other than 503": sum(1 for s in inside if s.status >= 500 and s.status != 503),
        "no answer": sum(1 for s in inside if s.status == 0),
        "moves": len(moves),  # of other games than ``spare``
        "move answers": dict(sorted(Counter(str(s.status) for s in moves).items())),
        "move p50 (ms)": round(pct([s.latency for s in moves], 0.50) * 1000, 1),
        "move p99 (ms)": round(pct([s.latency for s in moves], 0.99) * 1000, 1),
        "accepted move p99 (ms)": round(pct(ok_moves, 0.99) * 1000, 1),
        "slowest answer (s)": round(max((s.latency for s in inside), default=0.0), 2),
        "answers slower than 5 s": sum(1 for s in inside if s.latency > ANSWER_TARGET),
    }


def check_log(url: str, run: Run) -> dict[str, int]:
    import psycopg

    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain) as conn:
        rows = conn.execute(
            "SELECT game_id, idempotency_key, count(*) FROM move "
            "WHERE idempotency_key IS NOT NULL GROUP BY game_id, idempotency_key"
        ).fetchall()
    logged = {key: game for game, key, _ in rows}
    ours = set(run.acked) | set(run.unsettled)
    return {
        "acknowledged moves": len(run.acked),
        "acknowledged moves lost": sum(1 for k, g in run.acked.items() if logged.get(k) != g),
        "never settled by the client": len(run.unsettled),
        "unacknowledged moves applied": sum(1 for k in run.unsettled if k in logged),
        "applied twice": sum(1 for _, key, n in rows if key in ours and n > 1),
        "moves in the log the client never sent": sum(1 for k in logged if k not in ours),
    }


# -- main ----------------------------------------------------------------------------------------


async def wait_healthy(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text(errors='replace')[-3000:]}")
        conn = KeyedConnection(port)
        try:
            status, _ = await conn.send("GET", "/healthz", timeout=5)
            if status == 200:
                return
        except (ConnectionLost, OSError):
            pass
        finally:
            await conn.close()
        await asyncio.sleep(0.3)
    raise RuntimeError("the server did not answer /healthz within 90 s")


def with_stalls(report: dict[str, Any], probe: Any) -> dict[str, Any]:
    """How late a process that sleeps 1 ms woke up meanwhile: the machine's own stalls."""
    stalls = stall_report(probe)
    report["machine: late wake-up p99 / max (ms)"] = (
        f"{stalls['late p99 (ms)']} / {stalls['late max (ms)']}"
    )
    return report


async def scenarios(
    args: argparse.Namespace, pg: PgInstance, url: str, port: int, server: subprocess.Popen[bytes]
) -> dict[str, Any]:
    tokens = await make_players(port, args.players + 1)
    results: dict[str, Any] = {}
    long_id, long_moves, cookie = "", 0, ""
    if "c" in args.scenarios:
        long_id, long_moves, deal = await longest_game(port, tokens[-1])
        cookie = await asyncio.to_thread(finisher_cookie, port, "quadrangle", deal)
        results["longest game"] = {"id": long_id, "moves": long_moves, "deal": deal}
    run = Run(port, args.think_ms / 1000)
    players = [
        asyncio.create_task(player(run, token, seed)) for seed, token in enumerate(tokens[:-1])
    ]
    try:
        await asyncio.sleep(args.warmup)
        t = time.monotonic()
        probe = start_stall_probe(args.baseline)
        await asyncio.sleep(args.baseline)
        results["baseline (no fault)"] = with_stalls(window_report(run, t, time.monotonic()), probe)
        if "a" in args.scenarios:
            t0 = time.monotonic()
            probe = start_stall_probe(22)
            await asyncio.to_thread(pg.stop, "fast")
            await asyncio.sleep(10)
            await asyncio.to_thread(pg.start)
            back = time.monotonic()
            await asyncio.sleep(10)
            report = window_report(run, t0, time.monotonic())
            failing = [  # moves sent after the restart that were not served
                s.started + s.latency - back
                for s in run.samples
                if s.kind == "move" and s.started >= back and (s.status == 0 or s.status >= 500)
            ]
            report["stopped for (s)"] = round(back - t0, 1)
            report["last failed move after restart (s)"] = round(max(failing, default=0.0), 2)
            results["a: PostgreSQL stopped 10 s"] = with_stalls(report, probe)
            await asyncio.sleep(3)
        if "b" in args.scenarios:
            t0 = time.monotonic()
            probe = start_stall_probe(10)
            victim = await asyncio.to_thread(kill_a_worker, server)
            await asyncio.sleep(10)
            report = window_report(run, t0, time.monotonic())
            report["killed pid"] = victim
            results["b: a worker killed"] = with_stalls(report, probe)
            await asyncio.sleep(3)
        if "c" in args.scenarios:
            t0 = time.monotonic()
            probe = start_stall_probe(10)
            await replay_bursts(
                run, long_id, long_moves, bursts=5, every=2.0, clients=200, cookie=cookie
            )
            report = window_report(run, t0, time.monotonic())
            replays = [s for s in run.samples if s.kind == "replay"]
            report["replay answers"] = dict(sorted(Counter(str(s.status) for s in replays).items()))
            report["replay p99 (s)"] = round(pct([s.latency for s in replays], 0.99), 2)
            results["c: 5 bursts of 200 at once for the longest replay"] = with_stalls(
                report, probe
            )
            await asyncio.sleep(3)
        if "d" in args.scenarios:
            target = await asyncio.to_thread(game_in_play, url)
            t0 = time.monotonic()
            probe = start_stall_probe(30)
            await hold_row_lock(url, target, 30)
            report = window_report(run, t0, time.monotonic(), spare=target)
            locked = [s for s in run.samples if s.started >= t0 and s.game == target]
            report["locked game"] = target
            report["locked game's moves"] = dict(Counter(str(s.status) for s in locked))
            results["d: a row lock held 30 s"] = with_stalls(report, probe)
    finally:
        run.stop.set()
        await asyncio.gather(*players, return_exceptions=True)
    results["move log"] = await asyncio.to_thread(check_log, url, run)
    results["errors (first)"] = run.errors[:10]
    return results


def first_tracebacks(text: str, most: int = 3) -> list[str]:
    """The first few tracebacks of the server log, each cut to its head and its last lines."""
    found = []
    for part in text.split("Traceback (most recent call last)")[1 : most + 1]:
        lines = part.strip("\n").splitlines()
        body = lines if len(lines) <= 8 else [*lines[:2], "...", *lines[-5:]]
        found.append("\n".join(body))
    return found


def verdict(results: dict[str, Any]) -> list[str]:
    missed = []
    for name, report in results.items():
        if not isinstance(report, dict) or "500s" not in report:
            continue
        if report["5xx other than 503"]:
            missed.append(f"{name}: {report['5xx other than 503']} answers 5xx other than 503")
        if report["answers slower than 5 s"]:
            missed.append(f"{name}: {report['answers slower than 5 s']} answers over 5 s")
        if name[0] in "cd" and report["move p99 (ms)"] > MOVE_P99_TARGET * 1000:
            missed.append(f"{name}: move p99 {report['move p99 (ms)']} ms")
        refused = [k for k in report.get("replay answers", {}) if k.startswith("4")]
        if refused:  # the flood must ask for pages the app renders, or it measures nothing
            missed.append(f"{name}: replays refused with {', '.join(refused)}")
        if name[0] == "a" and report["last failed move after restart (s)"] > RECOVERY_TARGET:
            missed.append(f"{name}: full service only after {RECOVERY_TARGET} s")
    if results["server log"]["tracebacks"]:  # the issue asks for one log line instead
        missed.append(f"{results['server log']['tracebacks']} tracebacks in the server log")
    log = results["move log"]
    for key in ("acknowledged moves lost", "applied twice", "unacknowledged moves applied"):
        if log[key]:
            missed.append(f"{key}: {log[key]}")
    return missed


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=40)
    parser.add_argument("--think-ms", type=float, default=150.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--baseline", type=float, default=20.0, help="seconds without a fault")
    parser.add_argument("--scenarios", default="a,b,c,d")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    args.scenarios = {s.strip() for s in args.scenarios.split(",")}
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="ph-faults-") as tmp, PgInstance() as pg:
        url = pg.create_database("ph_faults")
        port = free_port()
        log = Path(tmp) / "server.log"
        # The start script's settings check imports the app's metrics, which need the
        # directory before the script empties and makes it again.
        (Path(tmp) / "metrics").mkdir(exist_ok=True)
        # Production refuses 2 workers without Redis (each would count rate limits apart).
        redis_port = free_port()
        redis = start_redis(redis_port, log)
        env = {
            "REDIS_URL": f"redis://{HOST}:{redis_port}/0",
            **os.environ,
            **BENCH_LIMITS,
            "APP_ENV": "production",
            "DATABASE_URL": url,
            "DEAL_KEY": secrets.token_urlsafe(32),
            "SESSION_SECRET": secrets.token_urlsafe(32),
            "HOST": HOST,
            "PORT": str(port),
            "WEB_CONCURRENCY": "2",
            "PYTHON": sys.executable,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PROMETHEUS_MULTIPROC_DIR": str(Path(tmp) / "metrics"),
        }
        with log.open("wb") as out:
            server = subprocess.Popen(
                [str(START)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        try:
            asyncio.run(wait_healthy(port, server, log))
            results = asyncio.run(scenarios(args, pg, url, port, server))
        finally:
            stop_server(server, timeout=30)
            redis.terminate()
            redis.wait(timeout=10)
        text = log.read_text(errors="replace")
        results["server log"] = {
            "lines": text.count("\n"),
            "tracebacks": text.count("Traceback (most recent call last)"),
            "first tracebacks": first_tracebacks(text),
            "json request lines": text.count('"logger":"patience_hall.access"'),
            "database unavailable lines": text.count("database unavailable:"),
        }
        facts = machine_facts(url)
    results["machine"] = facts
    results["command"] = " ".join(["bench/faults.py", *(argv or sys.argv[1:])])
    results["took (s)"] = round(time.time() - started)
    missed = verdict(results)
    results["targets missed"] = missed
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
