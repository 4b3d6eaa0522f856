"""HTTP load benchmark: many API players playing real games against a real server.

    .venv/bin/python bench/load.py                     # 100 players, 30 s (+5 s warm-up)
    .venv/bin/python bench/load.py --players 200 --duration 60 --think-ms 50
    .venv/bin/python bench/load.py --browser           # the API path and the browser path
    .venv/bin/python bench/load.py --ceiling           # API, browser and the raw ceiling

With ``--browser`` the same paced players also play through the browser's path, and the two
alternate on one server (``--rounds`` pairs of phases, each with its own warm-up and window;
the first path of a pair alternates too): a browser player reads the board page for its CSRF
token and its session cookie, starts a game with the form (``POST /games``, 303), reads the
board, and posts each move as the board's form does, with ``HX-Request``, reading the version
and the legal moves back from the fragment's ``game-status`` element. The report puts both
paths' moves/s and latencies side by side.

It starts uvicorn itself (``--factory app.main:create_app``, 2 workers by default) on 127.0.0.1
and a free port, against a freshly created PostgreSQL database brought up to date with
``alembic upgrade head``. Each player creates itself through ``POST /api/players``, starts a game
(one of the five, at random) and plays it move by move: it picks a move from the game's
``legal_moves`` (foundation moves and non-stock moves preferred, so games progress), waits a
think time, and posts it with the current version; when a game ends (or reaches --max-moves,
when the player resigns) it starts another. After the warm-up it measures for --duration
seconds, then stops everything it started, whatever happens (errors and Ctrl-C included).

It reports moves/s, the p50/p95/p99 latency of move requests (and the p99 of each 5 s window),
the answers by status, the CPU each party used (each worker too), and three probes that tell a
stalled machine from a slow server: stolen CPU, how late a sleeping process wakes, and how long
a commit takes on a connection of its own. It exits non-zero if the server answered any 5xx or a
connection failed. Players arrive over the first half of the warm-up (``--arrival burst``: all
at once).

With ``--ceiling`` the app is started as production starts it (``scripts/docker-start.sh``:
``python -m app.serve`` with httptools, proxy headers, no access log, a throwaway Redis on
127.0.0.1 for the rate limits of its workers), every request says ``Accept-Encoding: gzip,
deflate, br, zstd`` as a browser does (answers are decompressed as a browser would), API and
raw moves carry an ``Idempotency-Key``, and a third path joins the alternation: the raw ceiling
(bench/raw_ceiling.py, Starlette and psycopg's async pool doing a move's reads and writes on
the app's own tables, started beside the app on the same database). Each player has one game
of its own for the raw path, started through the app. The report ends with the ratios:
API / raw and browser / API. ``--floor`` (with ``--ceiling``) adds to the alternation
the raw ceiling's move sent as the app sends its own (``messages``) and the four levels of
bench/move_floor.py (that move inside the app's middleware and routing; also the body and
token checks; also the rate limits; also the rules engine and the app's own answer), served by
a third server, the app itself with those routes, on the same database and Redis; the report
then gives each against the raw ceiling.

The servers it starts listen on ports 9900-9999 of 127.0.0.1 (``--ceiling``) or a free port.

The client is a minimal HTTP/1.1 keep-alive client on asyncio (one connection per player), so
that the load generator, which shares the machine's cores with the server and PostgreSQL,
spends as little CPU as it can. It only ever connects to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import gzip
import html
import json
import math
import os
import random
import re
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from common import (
    HOST,
    cpu_ticks,
    free_port,
    local_postgres,
    machine_facts,
    port_in_range,
    production_env,
    recreate_database,
    start_production,
    start_redis,
    start_server,
    stop_server,
)

GAMES = ("quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs")
DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench"
# --floor's paths: the raw ceiling's move sent as the app sends its own (bench/raw_ceiling.py),
# and the levels of bench/move_floor.py.
RAW_MESSAGES = "messages"
FLOOR_LEVELS = ("stack", "checks", "gates", "engine")


# -- a minimal HTTP/1.1 client ------------------------------------------------------------------


class ConnectionLost(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection to the server under test."""

    # With --ceiling: what a browser sends (answers are decompressed, as a browser does).
    accept_encoding: str | None = None

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.last_used = 0.0
        self.cookies: dict[str, str] = {}  # what the server set (a browser's session)
        self.location = ""  # the Location of the last answer (a browser follows its 303s)

    async def _connect(self) -> None:
        await self.close()
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        form: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """One request on the kept-alive connection; ``timeout`` (seconds) bounds the wait
        for the answer (bench/faults.py), and a lost connection raises ConnectionLost."""
        # uvicorn drops idle keep-alive connections after 5 s: reconnect before that happens,
        # so that a request is never sent on a connection the server is closing.
        if self.writer is None or time.monotonic() - self.last_used > 4.0:
            await self._connect()
        assert self.reader is not None and self.writer is not None
        payload = b"" if body is None else json.dumps(body).encode()
        head = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}"]
        if form is not None:
            payload = urlencode(form).encode()
            content = "application/x-www-form-urlencoded"
            head += [f"Content-Type: {content}", f"Content-Length: {len(payload)}"]
        elif body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        elif method == "POST":
            head.append("Content-Length: 0")
        if token:
            head.append(f"Authorization: Bearer {token}")
        if self.accept_encoding:
            head.append(f"Accept-Encoding: {self.accept_encoding}")
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if self.cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        try:
            status, data, keep = await asyncio.wait_for(self._response(), timeout)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
            await self.close()
            raise ConnectionLost(f"{type(exc).__name__}: {exc}") from None
        self.last_used = time.monotonic()
        if not keep:
            await self.close()
        return status, data

    async def _response(self) -> tuple[int, bytes, bool]:
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name:
                headers[name.strip().lower()] = value.strip()
                if name.strip().lower() == "set-cookie":
                    cookie, _, _ = value.strip().partition(";")
                    key, _, kept = cookie.partition("=")
                    self.cookies[key] = kept
        self.location = headers.get("location", "")
        if "content-length" in headers:
            data = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                chunks.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            data = b"".join(chunks)
        else:
            data = b""
        if headers.get("content-encoding") == "gzip":
            data = gzip.decompress(data)
        return status, data, headers.get("connection", "").lower() != "close"


# -- the players ----------------------------------------------------------------------------------


@dataclass
class Sample:
    kind: str  # "move", "start", "resign", "read"
    status: int  # 0 for a lost connection
    started: float
    latency: float


@dataclass
class Run:
    port: int
    think: float
    max_moves: int
    keys: bool = False  # send an Idempotency-Key with each move (--ceiling)
    move_path: str = "/api/games/{id}/moves"  # where play() sends its moves (--floor: elsewhere)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    games_started: Counter[str] = field(default_factory=Counter)
    games_ended: Counter[str] = field(default_factory=Counter)

    async def call(
        self,
        conn: Connection,
        kind: str,
        method: str,
        path: str,
        body: Any,
        token: str | None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        started = time.perf_counter()
        try:
            status, data = await conn.request(method, path, body, token, headers)
        except (ConnectionLost, OSError) as exc:
            self.samples.append(Sample(kind, 0, started, time.perf_counter() - started))
            self.errors.append(f"{kind} {path}: {exc}")
            return 0, None
        self.samples.append(Sample(kind, status, started, time.perf_counter() - started))
        if status >= 400 and len(self.errors) < 50:
            self.errors.append(f"{kind} {path}: {status} {data[:300]!r}")
        return status, json.loads(data) if data else None


def choose(moves: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """A random legal move, tilted towards moves that make progress."""
    home = [m for m in moves if m["to"].startswith("f")]
    if home and rng.random() < 0.8:
        return rng.choice(home)
    other = [m for m in moves if m["from"] != "stock" and m["to"] != "stock"]  # no deal, redeal
    if other and rng.random() < 0.6:
        return rng.choice(other)
    return rng.choice(moves)


async def play(run: Run, token: str, seed: int, arrive_after: float = 0.0) -> None:
    rng = random.Random(seed)
    conn = Connection(run.port)
    await asyncio.sleep(arrive_after)
    try:
        while not run.stop.is_set():
            slug = rng.choice(GAMES)
            status, game = await run.call(
                conn, "start", "POST", "/api/games", {"game": slug}, token
            )
            if status != 201:
                await asyncio.sleep(0.5)
                continue
            run.games_started[slug] += 1
            while game["status"] == "playing" and not run.stop.is_set():
                if run.think:
                    await asyncio.sleep(run.think * rng.uniform(0.5, 1.5))
                # No legal move left, only an undo (contract v2): end the game.
                if game["moves"] >= run.max_moves or not game["legal_moves"]:
                    path = f"/api/games/{game['id']}/resign"
                    status, answer = await run.call(conn, "resign", "POST", path, None, token)
                    if status == 200:
                        game = answer
                    break
                move = choose(game["legal_moves"], rng)
                body = {**move, "version": game["version"]}
                path = run.move_path.format(id=game["id"])
                key = {"Idempotency-Key": uuid.uuid4().hex} if run.keys else None
                status, answer = await run.call(conn, "move", "POST", path, body, token, key)
                if status == 200:
                    game = answer
                    continue
                # Anything else: read the board again and carry on from what the server says.
                path = f"/api/games/{game['id']}"
                status, answer = await run.call(conn, "read", "GET", path, None, token)
                if status != 200:
                    await asyncio.sleep(0.5)
                    break
                game = answer
            if game["status"] != "playing":
                run.games_ended[f"{game['game']} {game['status']}"] += 1
    finally:
        await conn.close()


async def play_raw(
    run: Run,
    game_id: str,
    seed: int,
    arrive_after: float = 0.0,
    path: str = "/raw/games/{id}/moves",
    token: str | None = None,
) -> None:
    """A player of the raw ceiling: moves on its own game, each with the version the last
    answer gave (the raw server checks it as the app does, and applies no rules); ``path`` and
    ``token`` for a level of the floor that moves as the raw ceiling does."""
    rng = random.Random(seed)
    conn = Connection(run.port)
    await asyncio.sleep(arrive_after)
    version = -1  # the first answer (409) says the game's version
    path = path.format(id=game_id)
    try:
        while not run.stop.is_set():
            if run.think and version >= 0:
                await asyncio.sleep(run.think * rng.uniform(0.5, 1.5))
            # The first asks with version 0: a stale version answers with the current one.
            body = {"from": f"t{rng.randint(1, 8)}", "to": "f1", "version": max(version, 0)}
            key = {"Idempotency-Key": uuid.uuid4().hex}
            kind = "move" if version >= 0 else "read"  # the first learns the version
            status, answer = await run.call(conn, kind, "POST", path, body, token, key)
            if status in (200, 409) and answer is not None:
                version = int(answer["version"])
            else:
                await asyncio.sleep(0.5)
    finally:
        await conn.close()


async def make_games(port: int, tokens: list[str]) -> list[str]:
    """One game per player, through the app (set-up: the raw path's games)."""

    async def one(token: str) -> str:
        conn = Connection(port)
        try:
            status, data = await conn.request("POST", "/api/games", {"game": "corners"}, token)
        finally:
            await conn.close()
        if status != 201:
            raise RuntimeError(f"POST /api/games answered {status}: {data[:300]!r}")
        return str(json.loads(data)["id"])

    games: list[str] = []
    for start in range(0, len(tokens), 20):
        games += await asyncio.gather(*(one(t) for t in tokens[start : start + 20]))
    return games


# What a browser player reads back: the CSRF token of its session (any page), and the board's
# status element (the whole page, and every fragment a move or a refusal answers with).
CSRF_TOKEN = re.compile(r'name="csrftoken" value="([^"]+)"')
GAME_STATUS = re.compile(
    r'id="game-status" class="status (?P<status>[a-z]+)" data-game="(?P<game>[^"]+)" '
    r"data-version=\"(?P<version>[0-9]+)\" data-moves='(?P<legal>[^']*)'"
)


def _legal(text: str) -> list[dict[str, Any]]:
    """The status element's legal moves (``[["t3", "f1", 1], ["stock", "waste", 1, "deal"]]``,
    HTML-escaped) as the API lists them."""
    return [
        {"from": m[0], "to": m[1], "count": int(m[2])}
        for m in json.loads(html.unescape(text) or "[]")
    ]


@dataclass
class Board:
    """A browser player's game as its page shows it."""

    id: str
    status: str
    version: int
    legal: list[dict[str, Any]]
    moves: int = 0

    @classmethod
    def read(cls, page: bytes, moves: int = 0) -> Board | None:
        found = GAME_STATUS.search(page.decode("utf-8", "replace"))
        if found is None:
            return None
        return cls(
            found["game"], found["status"], int(found["version"]), _legal(found["legal"]), moves
        )


async def play_browser(run: Run, seed: int, arrive_after: float = 0.0) -> None:
    """One player in a browser: session cookie, the page's CSRF token, HTMX fragments."""
    rng = random.Random(seed)
    conn = Connection(run.port)
    await asyncio.sleep(arrive_after)

    async def call(
        kind: str, method: str, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        started = time.perf_counter()
        headers = {"Sec-Fetch-Site": "same-origin"}
        if form is not None:
            headers.update({"HX-Request": "true", "X-CSRFToken": token})
        try:
            status, data = await conn.request(method, path, headers=headers, form=form)
        except (ConnectionLost, OSError) as exc:
            run.samples.append(Sample(kind, 0, started, time.perf_counter() - started))
            run.errors.append(f"{kind} {path}: {exc}")
            return 0, b""
        run.samples.append(Sample(kind, status, started, time.perf_counter() - started))
        if status >= 400 and status not in (409, 422) and len(run.errors) < 50:
            run.errors.append(f"{kind} {path}: {status} {data[:300]!r}")
        return status, data

    token = ""
    try:
        status, page = await call("read", "GET", "/account")
        found = CSRF_TOKEN.search(page.decode("utf-8", "replace"))
        if found is None:
            run.errors.append(f"no CSRF token on /account ({status})")
            return
        token = found.group(1)
        while not run.stop.is_set():
            slug = rng.choice(GAMES)
            # The form's post: a 303 to the new board, which the browser then loads.
            status, _ = await call("start", "POST", "/games", {"game": slug})
            if status != 303 or not conn.location.startswith("/games/"):
                await asyncio.sleep(0.5)
                continue
            run.games_started[slug] += 1
            status, page = await call("read", "GET", conn.location)
            board = Board.read(page) if status == 200 else None
            while board is not None and board.status == "playing" and not run.stop.is_set():
                if run.think:
                    await asyncio.sleep(run.think * rng.uniform(0.5, 1.5))
                path = f"/games/{board.id}"
                version = str(board.version)
                if board.moves >= run.max_moves or not board.legal:  # (no move: only undo)
                    status, data = await call(
                        "resign", "POST", path + "/resign", {"version": version}
                    )
                    board = Board.read(data, board.moves) if status == 200 else None
                    break
                move = choose(board.legal, rng)
                form = {"from": move["from"], "to": move["to"], "count": str(move["count"])}
                status, data = await call(
                    "move", "POST", path + "/moves", {**form, "version": version}
                )
                # A refusal answers with the whole current board: carry on from it.
                after = Board.read(data, board.moves + (status == 200))
                if after is None:
                    status, page = await call("read", "GET", path)
                    after = Board.read(page, board.moves) if status == 200 else None
                    if after is None:
                        await asyncio.sleep(0.5)
                board = after
            if board is not None and board.status != "playing":
                run.games_ended[f"{slug} {board.status}"] += 1
    finally:
        await conn.close()


async def make_players(port: int, count: int) -> list[str]:
    async def one(i: int) -> str:
        conn = Connection(port)
        try:
            status, data = await conn.request("POST", "/api/players", {})
        finally:
            await conn.close()
        if status != 201:
            raise RuntimeError(f"POST /api/players answered {status}: {data[:300]!r}")
        return str(json.loads(data)["token"])

    tokens: list[str] = []
    for start in range(0, count, 20):  # a few at a time: this is set-up, not the benchmark
        tokens += await asyncio.gather(*(one(i) for i in range(start, min(start + 20, count))))
    return tokens


# -- CPU accounting --------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _is_worker(pid: int) -> bool:
    """A uvicorn worker process, not multiprocessing's resource tracker beside them."""
    try:
        return b"multiprocessing-fork" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _postgres_pids(database: str | None = None) -> list[int]:
    """PostgreSQL's processes; with ``database``, only the backends connected to it (their
    process title names the database: ``postgres: 15/main: user ph_bench 127.0.0.1(…) idle``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() != "postgres":
                    continue
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if database is None or f" {database} " in title:
                pids.append(int(entry.name))
    return pids


def _machine_busy() -> tuple[int, int, int]:
    """Busy, total and stolen ticks of all CPUs (/proc/stat: user nice system idle iowait irq
    softirq steal …)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields), fields[7]


# A process that asks to wake every millisecond and notes how late it wakes: what any ready
# process waits for a CPU at that moment (our load, and on a virtual machine its host's).
STALL_PROBE = """
import sys, time
end = time.monotonic() + float(sys.argv[1])
late = []
while (t := time.monotonic()) < end:
    time.sleep(0.001)
    late.append(time.monotonic() - t - 0.001)
late.sort()
print(len(late), late[len(late) * 99 // 100], late[-1], sum(1 for x in late if x > 0.02))
"""


def start_stall_probe(seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", STALL_PROBE, str(seconds)], stdout=subprocess.PIPE, text=True
    )


def stall_report(probe: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = probe.communicate(timeout=30)
    wakes, p99, worst, over_20 = out.split()
    return {
        "wake-ups": int(wakes),
        "late p99 (ms)": round(float(p99) * 1000, 2),
        "late max (ms)": round(float(worst) * 1000, 2),
        "late > 20 ms": int(over_20),
    }


# A separate connection that commits a transaction with a transaction id every 20 ms: how long
# PostgreSQL takes to make a commit durable (the WAL flush every move waits for) at that moment.
COMMIT_PROBE = """
import sys, time, psycopg
seconds, url = float(sys.argv[1]), sys.argv[2]
with psycopg.connect(url, autocommit=True) as conn:
    start = time.monotonic()
    worst = [0.0] * (int(seconds // 5) or 1)
    took = []
    while (t := time.monotonic()) < start + seconds:
        conn.execute("SELECT txid_current()")
        d = time.monotonic() - t
        took.append(d)
        i = min(len(worst) - 1, int((t - start) // 5))
        worst[i] = max(worst[i], d)
        time.sleep(0.02)
took.sort()
print(len(took), took[len(took) * 99 // 100], " ".join(str(w) for w in worst))
"""


def start_commit_probe(seconds: float, url: str) -> subprocess.Popen[str]:
    from sqlalchemy.engine import make_url

    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    return subprocess.Popen(
        [sys.executable, "-c", COMMIT_PROBE, str(seconds), plain],
        stdout=subprocess.PIPE,
        text=True,
    )


def commit_report(probe: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = probe.communicate(timeout=30)
    count, p99, *worst = out.split()
    return {
        "commits": int(count),
        "p99 (ms)": round(float(p99) * 1000, 2),
        "max by 5 s (ms)": [round(float(w) * 1000, 1) for w in worst],
    }


@dataclass
class CpuSnapshot:
    server: int
    workers: dict[int, int]
    postgres: int
    bench_backends: dict[int, int]
    client: float
    busy: int
    total: int
    steal: int
    at: float


def cpu_snapshot(server_pid: int, database: str) -> CpuSnapshot:
    workers = _children(server_pid)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    busy, total, steal = _machine_busy()
    return CpuSnapshot(
        server=cpu_ticks(server_pid) + sum(cpu_ticks(p) for p in workers),
        workers={p: cpu_ticks(p) for p in workers if _is_worker(p)},
        # Every PostgreSQL process, with the backends that exited since it started (reaped by
        # the postmaster): on a shared machine this includes other people's databases.
        postgres=sum(cpu_ticks(p) + cpu_ticks(p, reaped=True) for p in _postgres_pids()),
        bench_backends={p: cpu_ticks(p) for p in _postgres_pids(database)},
        client=usage.ru_utime + usage.ru_stime,
        busy=busy,
        total=total,
        steal=steal,
        at=time.monotonic(),
    )


def pg_counters(url: str) -> dict[str, int]:
    """The benchmark database's session and transaction counters (pg_stat_database)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_stat_clear_snapshot()"))
            row = conn.execute(
                text(
                    "SELECT sessions, xact_commit, xact_rollback FROM pg_stat_database "
                    "WHERE datname = current_database()"
                )
            ).one()
    finally:
        engine.dispose()
    return {"sessions": row[0], "commits": row[1], "rollbacks": row[2]}


def cpu_report(a: CpuSnapshot, b: CpuSnapshot, moves: int) -> dict[str, float]:
    hz = os.sysconf("SC_CLK_TCK")
    wall = b.at - a.at
    ncpu = os.cpu_count() or 1
    busy = ncpu * (b.busy - a.busy) / max(1, b.total - a.total)
    server = (b.server - a.server) / hz / wall
    postgres = (b.postgres - a.postgres) / hz / wall
    # Backends of the benchmark database that lived through the whole window.
    kept = a.bench_backends.keys() & b.bench_backends.keys()
    backends = sum(b.bench_backends[p] - a.bench_backends[p] for p in kept) / hz / wall
    client = (b.client - a.client) / wall
    # Each worker serves the connections it accepted, for as long as they stay open.
    per_worker = sorted(
        (b.workers[p] - a.workers[p]) / hz / wall for p in a.workers.keys() & b.workers.keys()
    )
    return {
        "uvicorn workers (cores)": server,
        "uvicorn CPU per move (ms)": 1000 * server * wall / max(1, moves),
        **{f"worker {i + 1} (cores)": cores for i, cores in enumerate(per_worker)},
        "postgres, all processes (cores)": postgres,
        "postgres, bench db pooled backends (cores)": backends,
        "postgres CPU per move (ms, bench backends)": 1000 * backends * wall / max(1, moves),
        "load generator (cores)": client,
        # Whatever else ran meanwhile (on a shared machine: other people's tests, say).
        "everything else (cores)": max(0.0, busy - server - postgres - client),
        "machine busy (cores)": busy,
        # Time the hypervisor ran something else while this machine had work (virtual CPUs).
        "stolen (cores)": ncpu * (b.steal - a.steal) / max(1, b.total - a.total),
    }


# -- the server and its database --------------------------------------------------------------


def fresh_database(url: str) -> None:
    """Drop and create the benchmark database, then migrate it with Alembic."""
    parsed = local_postgres(url, "benchmark")
    name = parsed.database
    if not name or not (name == "ph_bench" or name.startswith(("ph_bench_", "ph_load"))):
        sys.exit(
            f"refusing to drop database {name!r}: this benchmark only drops and recreates "
            "ph_bench, ph_bench_* or ph_load* databases"
        )
    recreate_database(parsed)


async def wait_until_up(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text(errors='replace')[-3000:]}")
        conn = Connection(port)
        try:
            status, _ = await conn.request("GET", "/healthz")
            if status == 200:
                return
        except (ConnectionLost, OSError):
            pass
        finally:
            await conn.close()
        await asyncio.sleep(0.2)
    raise RuntimeError("the server did not answer /healthz within 60 s")


# -- the report ------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summarize(run: Run, t0: float, t1: float, cpu: dict[str, float]) -> dict[str, Any]:
    window = [s for s in run.samples if t0 <= s.started + s.latency < t1]
    moves = [s for s in window if s.kind == "move"]
    ok = [s for s in moves if s.status == 200]
    lat = [s.latency * 1000 for s in moves]
    buckets = Counter(int((s.started + s.latency - t0) // 5) for s in ok)
    by_window: dict[int, list[float]] = {}
    for s in moves:
        by_window.setdefault(int((s.started + s.latency - t0) // 5), []).append(s.latency * 1000)
    statuses = Counter(f"{s.kind} {s.status or 'connection lost'}" for s in run.samples)
    return {
        "window_s": round(t1 - t0, 2),
        "moves_ok": len(ok),
        "moves_per_s": round(len(ok) / (t1 - t0), 1),
        "moves_per_s_by_5s": [round(buckets[i] / 5, 1) for i in range(int((t1 - t0) // 5))],
        "requests_per_s": round(len(window) / (t1 - t0), 1),
        "move_latency_ms": {
            "p50": round(percentile(lat, 0.50), 2),
            "p95": round(percentile(lat, 0.95), 2),
            "p99": round(percentile(lat, 0.99), 2),
            "max": round(max(lat, default=math.nan), 2),
            "mean": round(sum(lat) / len(lat), 2) if lat else math.nan,
            # A short stall of the machine shows as one slow window rather than a slow run.
            "p99_by_5s": [
                round(percentile(by_window.get(i, []), 0.99), 1) for i in range(int((t1 - t0) // 5))
            ],
        },
        "other_latency_ms_p50": {
            kind: round(percentile([s.latency * 1000 for s in window if s.kind == kind], 0.5), 2)
            for kind in ("start", "resign", "read")
            if any(s.kind == kind for s in window)
        },
        "answers_whole_run": dict(sorted(statuses.items())),
        "server_errors": sum(1 for s in run.samples if s.status >= 500),
        "connection_errors": sum(1 for s in run.samples if s.status == 0),
        "games_started": sum(run.games_started.values()),
        "games_ended": dict(sorted(run.games_ended.items())),
        "cpu": {k: round(v, 2) for k, v in cpu.items()},
    }


def print_report(args: argparse.Namespace, facts: dict[str, str], result: dict[str, Any]) -> None:
    lat = result["move_latency_ms"]
    print(f"\n== Patience Hall HTTP load: {args.players} players, {args.workers} workers ==")
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(
        f"window {result['window_s']} s (after {args.warmup} s warm-up), "
        f"think {args.think_ms} ms ±50%"
    )
    print(f"moves/s        {result['moves_per_s']}  (per 5 s: {result['moves_per_s_by_5s']})")
    print(f"requests/s     {result['requests_per_s']}")
    print(
        f"move latency   p50 {lat['p50']} ms  p95 {lat['p95']} ms  p99 {lat['p99']} ms  "
        f"max {lat['max']} ms  mean {lat['mean']} ms"
    )
    print(f"p99 per 5 s    {lat['p99_by_5s']}")
    print(f"other p50 ms   {result['other_latency_ms_p50']}")
    print(f"answers        {result['answers_whole_run']}")
    print(f"games          {result['games_started']} started; ended: {result['games_ended']}")
    print(f"cpu            {result['cpu']}")
    print(f"postgres /s    {result['postgres_per_s']}")
    print(f"wake-up delay  {result['stalls']}")
    print(f"commit probe   {result['commit_probe']}")
    print(f"5xx {result['server_errors']}, lost connections {result['connection_errors']}")


def _other_answers(phase: dict[str, Any]) -> dict[str, int]:
    """A phase's answers that were not a success or a redirect, by kind."""
    answers: dict[str, int] = phase["answers_whole_run"]
    return {k: v for k, v in answers.items() if not k.endswith((" 200", " 201", " 303"))}


def print_comparison(
    args: argparse.Namespace, facts: dict[str, str], phases: list[dict[str, Any]]
) -> None:
    """The API path and the browser path side by side, phase by phase, then their medians."""
    print(f"\n== Patience Hall HTTP load, API and browser paths: {args.players} players ==")
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(
        f"each phase: {args.warmup} s warm-up, {args.duration} s window; "
        f"think {args.think_ms} ms ±50%"
    )
    print("\n| Round | Path | Moves/s | p50 ms | p95 ms | p99 ms | max ms | server CPU/move ms "
          "| busy | 5xx | other answers |")  # fmt: skip
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for p in phases:
        lat, cpu = p["move_latency_ms"], p["cpu"]
        others = _other_answers(p)
        print(
            f"| {p['round']} | {p['path']} | {p['moves_per_s']} | {lat['p50']} | {lat['p95']} "
            f"| {lat['p99']} | {lat['max']} | {cpu['uvicorn CPU per move (ms)']} "
            f"| {cpu['machine busy (cores)']} | {p['server_errors']} | {others or '-'} |"
        )
    medians: dict[str, dict[str, float]] = {}
    for path in ("api", "browser"):
        mine = [p for p in phases if p["path"] == path]
        if not mine:  # --only
            return
        medians[path] = {
            "moves_per_s": statistics.median(p["moves_per_s"] for p in mine),
            "p50": statistics.median(p["move_latency_ms"]["p50"] for p in mine),
            "p99": statistics.median(p["move_latency_ms"]["p99"] for p in mine),
        }
    api, browser = medians["api"], medians["browser"]
    ratio = browser["moves_per_s"] / api["moves_per_s"] if api["moves_per_s"] else math.nan
    print(
        f"\nmedians: API {api['moves_per_s']:.1f} moves/s (p50 {api['p50']:.2f}, p99 "
        f"{api['p99']:.2f} ms); browser {browser['moves_per_s']:.1f} moves/s (p50 "
        f"{browser['p50']:.2f}, p99 {browser['p99']:.2f} ms); browser/API moves/s {ratio:.2f}"
    )


# -- main ------------------------------------------------------------------------------------------


async def benchmark(
    args: argparse.Namespace,
    port: int,
    server_pid: int,
    path: str = "api",
    tokens: list[str] | None = None,
    raw: tuple[int, int, list[str]] | None = None,
    floor: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One measured phase: ``--players`` players on the API (``tokens``: players made before)
    or in browsers (each makes itself with its first game, as a visitor does), on the raw
    ceiling (``raw``: its port, its pid and the players' games) or on a level of the floor
    (``floor``: its port and pid)."""
    database = local_postgres(args.database_url, "benchmark").database
    if path == "api" and tokens is None:
        tokens = await make_players(port, args.players)
    if path in ("raw", RAW_MESSAGES, *FLOOR_LEVELS):
        assert raw is not None
        port, server_pid, games = raw
    if path in FLOOR_LEVELS:
        assert floor is not None
        port, server_pid = floor
    run = Run(port=port, think=args.think_ms / 1000, max_moves=args.max_moves, keys=args.ceiling)
    # The load generator's own collector pauses (measured: 124 young collections, one full one
    # of 28 ms in a 35 s run) would be added to every request in flight at that moment. A run is
    # short and makes little cyclic garbage, so it runs without.
    gc.collect()
    gc.freeze()
    gc.disable()
    # Players arrive one after another over the first half of the warm-up, not in one burst:
    # uvicorn's workers share one listening socket, and a burst of connections is accepted
    # largely by whichever worker wakes first (70 % / 30 % measured), which then serves them for
    # the whole run (keep-alive).
    spread = args.warmup / 2 if args.arrival == "spread" else 0.0
    seeds = [args.seed * 100_003 + i for i in range(args.players)]
    delays = [spread * i / args.players for i in range(args.players)]
    if path == "api":
        assert tokens is not None
        players = [play(run, t, seeds[i], delays[i]) for i, t in enumerate(tokens)]
    elif path == "raw":
        players = [play_raw(run, g, seeds[i], delays[i]) for i, g in enumerate(games)]
    elif path == RAW_MESSAGES:
        level = "/raw/messages/games/{id}/moves"
        players = [play_raw(run, g, seeds[i], delays[i], level) for i, g in enumerate(games)]
    elif path == "engine":  # real moves: each player plays its own games as an API player
        assert tokens is not None
        run.move_path = "/api/floor/{id}/engine"
        players = [play(run, t, seeds[i], delays[i]) for i, t in enumerate(tokens)]
    elif path in FLOOR_LEVELS:  # the raw ceiling's moves, on the players' raw games
        assert tokens is not None
        level = f"/api/floor/{{id}}/{path}"
        players = [
            play_raw(run, g, seeds[i], delays[i], level, tokens[i]) for i, g in enumerate(games)
        ]
    else:
        players = [play_browser(run, seeds[i], delays[i]) for i in range(args.players)]
    tasks = [asyncio.create_task(p) for p in players]
    try:
        await asyncio.sleep(args.warmup)
        pg_before = await asyncio.to_thread(pg_counters, args.database_url)
        probe = start_stall_probe(args.duration)
        commits = start_commit_probe(args.duration, args.database_url)
        t0, before = time.perf_counter(), cpu_snapshot(server_pid, database)
        while time.perf_counter() < t0 + args.duration and not all(t.done() for t in tasks):
            await asyncio.sleep(min(0.1, max(0.0, t0 + args.duration - time.perf_counter())))
        t1, after = time.perf_counter(), cpu_snapshot(server_pid, database)
        pg_after = await asyncio.to_thread(pg_counters, args.database_url)
    finally:
        gc.enable()
        run.stop.set()
        done, pending = await asyncio.wait(tasks, timeout=15)
        for task in pending:
            task.cancel()
    for task in done:
        if task.exception() is not None:
            run.errors.append(f"a player crashed: {task.exception()!r}")
    moves = sum(
        1
        for s in run.samples
        if s.kind == "move" and s.status == 200 and t0 <= s.started + s.latency < t1
    )
    result = summarize(run, t0, t1, cpu_report(before, after, moves))
    # The counters include the two connections that read them.
    result["postgres_per_s"] = {
        k: round((pg_after[k] - pg_before[k]) / (t1 - t0), 1) for k in pg_before
    }
    result["stalls"] = await asyncio.to_thread(stall_report, probe)
    result["commit_probe"] = await asyncio.to_thread(commit_report, commits)
    result["client_errors_sample"] = run.errors[:10]
    return result


def print_ceiling(
    args: argparse.Namespace, facts: dict[str, str], phases: list[dict[str, Any]]
) -> None:
    """API, browser and the raw ceiling, phase by phase, then the medians and their ratios."""
    print(f"\n== Patience Hall against its raw ceiling: {args.players} players ==")
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(
        f"production start ({args.workers} workers), Accept-Encoding as a browser; each phase "
        f"{args.warmup} s warm-up, {args.duration} s window; think {args.think_ms} ms ±50%"
    )
    print("\n| Round | Path | Moves/s | p50 ms | p99 ms | max ms | server CPU/move ms "
          "| PG CPU/move ms | busy cores | 5xx | other answers |")  # fmt: skip
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for p in phases:
        lat, cpu = p["move_latency_ms"], p["cpu"]
        others = _other_answers(p)
        print(
            f"| {p['round']} | {p['path']} | {p['moves_per_s']} | {lat['p50']} | {lat['p99']} "
            f"| {lat['max']} | {cpu['uvicorn CPU per move (ms)']} "
            f"| {cpu['postgres CPU per move (ms, bench backends)']} "
            f"| {cpu['machine busy (cores)']} | {p['server_errors']} | {others or '-'} |"
        )
    med: dict[str, float] = {}
    levels = [
        level for level in (RAW_MESSAGES, *FLOOR_LEVELS) if any(p["path"] == level for p in phases)
    ]
    for path in ("api", "browser", "raw", *levels):
        mine = [p["moves_per_s"] for p in phases if p["path"] == path]
        med[path] = statistics.median(mine) if mine else math.nan
    ratio = {
        "API / raw": med["api"] / med["raw"] if med["raw"] else math.nan,
        "browser / API": med["browser"] / med["api"] if med["api"] else math.nan,
        "browser / raw": med["browser"] / med["raw"] if med["raw"] else math.nan,
    }
    ratio.update({f"{level} / raw": med[level] / med["raw"] for level in levels if med["raw"]})
    if "engine" in levels and med["engine"]:
        ratio["API / engine"] = med["api"] / med["engine"]
    if RAW_MESSAGES in levels and med[RAW_MESSAGES]:
        ratio[f"API / {RAW_MESSAGES}"] = med["api"] / med[RAW_MESSAGES]
    print(
        "\nmedians moves/s: "
        + ", ".join(f"{path} {med[path]:.1f}" for path in med)
        + "; ratios: "
        + ", ".join(f"{k} {v:.2f}" for k, v in ratio.items())
    )
    over_raw = cpu_over_raw(phases)
    if over_raw:
        # On a box whose speed drifts from minute to minute, moves/s swing by more than a change
        # of a few percent; each path's CPU a move over the raw path's in the same round holds
        # far stiller, as the drift moves both.
        print(
            "server CPU a move over the raw path's, same round (median of rounds): "
            + ", ".join(f"{path} {value:.2f}×" for path, value in over_raw.items())
        )


def cpu_over_raw(phases: list[dict[str, Any]]) -> dict[str, float]:
    """Each path's server CPU per move divided by the raw path's in the same round, median over
    the rounds that have both."""
    key = "uvicorn CPU per move (ms)"
    raw = {p["round"]: p["cpu"][key] for p in phases if p["path"] == "raw" and p["cpu"][key]}
    over: dict[str, list[float]] = {}
    for p in phases:
        if p["path"] != "raw" and p["round"] in raw:
            over.setdefault(p["path"], []).append(p["cpu"][key] / raw[p["round"]])
    return {path: statistics.median(values) for path, values in over.items()}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=100, help="concurrent API players")
    parser.add_argument("--duration", type=float, default=30, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=5, help="seconds before measuring")
    parser.add_argument(
        "--think-ms", type=float, default=100, help="mean pause before each move (±50%%)"
    )
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument(
        "--max-moves", type=int, default=300, help="resign a game after this many moves"
    )
    parser.add_argument("--access-log", action="store_true", help="keep uvicorn's access log")
    parser.add_argument(
        "--db-pool-size", type=int, help="the server's DB_POOL_SIZE (default: the app's)"
    )
    parser.add_argument(
        "--arrival",
        choices=("spread", "burst"),
        default="spread",
        help="players connect over the first half of the warm-up, or all at once",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--browser",
        action="store_true",
        help="alternate phases of API players and browser players on one server",
    )
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="production start; alternate API, browser and the raw ceiling; print the ratios",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="with --ceiling: also the floor's levels (bench/move_floor.py) in the alternation",
    )
    parser.add_argument(
        "--paths",
        help="with --ceiling: the paths to alternate, comma-separated (default: all; profiling)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="with --browser: pairs of phases")
    parser.add_argument(
        "--only", choices=("api", "browser"), help="with --browser: one path only (profiling)"
    )
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.players <= 2000 or not 0 < args.duration <= 600 or args.workers < 1:
        parser.error("--players 1..2000, --duration up to 600 s, --workers 1 or more")
    if args.warmup < 0 or args.think_ms < 0:
        parser.error("--warmup and --think-ms cannot be negative")
    if args.floor and not args.ceiling:
        parser.error("--floor goes with --ceiling")
    known = ("api", "browser", "raw", *((RAW_MESSAGES, *FLOOR_LEVELS) if args.floor else ()))
    if args.paths is not None and (
        not args.ceiling or not set(args.paths.split(",")) <= set(known)
    ):
        parser.error(f"--paths goes with --ceiling, and names some of: {', '.join(known)}")
    return args


def _interrupted(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    local_postgres(args.database_url, "benchmark")
    signal.signal(signal.SIGTERM, _interrupted)
    fresh_database(args.database_url)
    facts = machine_facts(args.database_url)
    log = Path(tempfile.mkstemp(prefix="ph-load-server-", suffix=".log")[1])
    pool = {} if args.db_pool_size is None else {"DB_POOL_SIZE": str(args.db_pool_size)}
    # Three servers on one PostgreSQL (100 connections) with --floor: the bench's own servers'
    # pools are smaller, and the floor's app serves only its games' starts and reads.
    bench_pool = args.db_pool_size or (5 if args.floor else 10)
    helpers: list[subprocess.Popen[bytes]] = []  # Redis, the raw and floor servers (--ceiling)
    raw_port = floor_port = 0
    raw_server = floor_server = None
    if args.ceiling:
        Connection.accept_encoding = "gzip, deflate, br, zstd"
        redis_port = port_in_range()
        helpers.append(start_redis(redis_port, log))
        port = port_in_range()
        # The floor's server is the app too: the same database, so the same DEAL_KEY.
        shared = {**pool, "DEAL_KEY": secrets.token_urlsafe(32)}
        redis_url = f"redis://{HOST}:{redis_port}/0"
        server = start_production(
            args.database_url, port, args.workers, log, redis_url=redis_url, env=shared
        )
        raw_port = port_in_range()
        raw_command = [
            sys.executable, str(Path(__file__).resolve().parent / "raw_ceiling.py"),
            "--port", str(raw_port), "--database-url", args.database_url,
            "--workers", str(args.workers), "--pool-size", str(bench_pool),
        ]  # fmt: skip
        with log.open("ab") as out:
            raw_server = subprocess.Popen(
                raw_command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        helpers.append(raw_server)
        if args.floor:
            floor_port = port_in_range()
            floor_command = [
                sys.executable, str(Path(__file__).resolve().parent / "move_floor.py"),
                "--port", str(floor_port), "--workers", str(args.workers),
                "--pool-size", str(bench_pool),
            ]  # fmt: skip
            environment = production_env(
                args.database_url, floor_port, args.workers, redis_url=redis_url,
                env={**shared, "DB_POOL_SIZE": "2"},
            )  # fmt: skip
            with log.open("ab") as out:
                floor_server = subprocess.Popen(
                    floor_command, env=environment, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            helpers.append(floor_server)
    else:
        port = free_port()
        server = start_server(
            args.database_url, port, args.workers, log, access_log=args.access_log, env=pool
        )
    try:
        loop_policy = None
        with contextlib.suppress(ImportError):
            import uvloop

            loop_policy = uvloop.new_event_loop

        async def go() -> dict[str, Any]:
            await wait_until_up(port, server, log)
            if args.ceiling:
                assert raw_server is not None
                await wait_until_up(raw_port, raw_server, log)
                floor = None
                if floor_server is not None:
                    await wait_until_up(floor_port, floor_server, log)
                    floor = (floor_port, floor_server.pid)
                tokens = await make_players(port, args.players)
                raw = (raw_port, raw_server.pid, await make_games(port, tokens))
                if floor is not None:
                    # An engine phase first, not measured: the floor's app does its first games'
                    # one-time work (measured: 0.7 of a core beside its workers) before the rounds.
                    await benchmark(args, port, server.pid, "engine", tokens, raw, floor)
                phases = []
                paths = ("api", "browser", "raw", *((RAW_MESSAGES, *FLOOR_LEVELS) if floor else ()))
                if args.paths is not None:
                    paths = tuple(p for p in paths if p in args.paths.split(","))
                for r in range(args.rounds):
                    # Each round starts one path later, so that none is always first.
                    n = r % len(paths)
                    for path in paths[n:] + paths[:n]:
                        phase = await benchmark(args, port, server.pid, path, tokens, raw, floor)
                        phases.append({"path": path, "round": r + 1, **phase})
                return {"phases": phases}
            if not args.browser:
                return await benchmark(args, port, server.pid)
            # Both paths on one server, alternating, so that a drift of the machine (a
            # neighbour, the database growing) falls on both alike.
            tokens = await make_players(port, args.players)
            phases = []
            for r in range(args.rounds):
                order = ("api", "browser") if r % 2 == 0 else ("browser", "api")
                for path in [p for p in order if args.only in (None, p)]:
                    phase = await benchmark(args, port, server.pid, path, tokens)
                    phases.append({"path": path, "round": r + 1, **phase})
            return {"phases": phases}

        with asyncio.Runner(loop_factory=loop_policy) as runner:
            result = runner.run(go())
    except KeyboardInterrupt:
        print("interrupted: stopping the server", file=sys.stderr)
        return 130
    finally:
        stop_server(server)
        for helper in helpers:
            stop_server(helper)
    result["machine"] = facts
    result["command"] = "python bench/load.py " + " ".join(sys.argv[1:] if argv is None else argv)
    phases = result.get("phases", [result])
    if args.ceiling:
        print_ceiling(args, facts, phases)
    elif args.browser:
        print_comparison(args, facts, phases)
    else:
        print_report(args, facts, result)
    for phase in phases:
        if phase["client_errors_sample"]:
            print("sample of errors:", *phase["client_errors_sample"], sep="\n  ")
    print(f"server log: {log}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    failed = any(p["server_errors"] or p["connection_errors"] for p in phases)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
