"""Statistics at scale: leaderboards, deal pages and player pages against a filled database.

    .venv/bin/python bench/fill_stats.py          # once: 100,000 players, 1,000,000 games
    .venv/bin/python bench/stats.py               # 300 measured requests per page
    .venv/bin/python bench/stats.py --explain     # also EXPLAIN ANALYZE every query the pages run

It starts uvicorn itself (``--factory app.main:create_app``, 2 workers, 127.0.0.1, a free port)
against the database filled by bench/fill_stats.py (default ``ph_stats_bench``; it only reads
it), picks its targets from the data (the most played deal, a deal played once, the player with
the most games), warms up, then requests every page in turn, one request at a time over a
keep-alive connection, and reports p50/p95/p99 per page against the target: p95 ≤ 50 ms on the
2-core box. The server is stopped afterwards, whatever happens. The exit status is non-zero if
any answer was not a 200.

``--explain`` runs the app's own statistics services in this process once per page, records every
SQL statement they send, and prints ``EXPLAIN (ANALYZE, BUFFERS)`` for each, with its time.

``--compare`` times, on the same database in the same run, the queries the pages sent before
migration 0003 (counting a deal's games, adding up ``player_stats`` and ``daily_stats`` for each
game's win rate) against the ones they send now (one ``deal_stats`` row, ``game_daily_stats``).

``--cache-seconds 0`` turns the recent-period leaderboard cache off in the server under test
(``LEADERBOARD_CACHE_SECONDS``), to measure those boards computed on every request.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from common import (
    HOST,
    ROOT,
    free_port,
    local_postgres,
    machine_facts,
    start_server,
    stop_server,
)

sys.path.insert(0, str(ROOT))

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_stats_bench"
TARGET_P95_MS = 50.0


# -- the server ------------------------------------------------------------------------------------


def wait_until_up(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text(errors='replace')[-3000:]}")
        conn = http.client.HTTPConnection(HOST, port, timeout=5)
        try:
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.2)
    raise RuntimeError("the server did not answer /healthz within 60 s")


@contextlib.contextmanager
def running_server(url: str, workers: int, cache_seconds: float | None) -> Iterator[int]:
    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"ph-stats-bench-{port}.log"
    cache = {} if cache_seconds is None else {"LEADERBOARD_CACHE_SECONDS": str(cache_seconds)}
    server = start_server(url, port, workers, log, env=cache)
    try:
        wait_until_up(port, server, log)
        yield port
    finally:
        stop_server(server)
        log.unlink(missing_ok=True)


# -- the targets and the measurements -------------------------------------------------------------


def targets(url: str) -> dict[str, str]:
    """The pages to measure, picked from the data."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            heavy_deal = conn.execute(
                text(
                    "SELECT game, deal, count(*) FROM game WHERE first_move_at IS NOT NULL"
                    " GROUP BY game, deal ORDER BY 3 DESC LIMIT 1"
                )
            ).one()
            rare_deal = conn.execute(
                text(
                    "SELECT g.game, g.deal FROM game g WHERE g.status = 'won' AND NOT EXISTS ("
                    " SELECT 1 FROM game o WHERE o.game = g.game AND o.deal = g.deal"
                    " AND o.id <> g.id) LIMIT 1"
                )
            ).one()
            heavy_player = conn.execute(
                text(
                    "SELECT p.name, s.played FROM player_stats s JOIN player p"
                    " ON p.id = s.player_id WHERE s.game = 'all' ORDER BY s.played DESC LIMIT 1"
                )
            ).one()
    finally:
        engine.dispose()
    print(
        f"targets: most played deal {heavy_deal[0]}/{heavy_deal[1]} ({heavy_deal[2]} games), "
        f"a deal played once {rare_deal[0]}/{rare_deal[1]}, "
        f"heaviest player {heavy_player[0]} ({heavy_player[1]} games)"
    )
    return {
        "GET /api/leaderboard": "/api/leaderboard",
        "GET /api/leaderboard?game=corners": "/api/leaderboard?game=corners",
        "GET /api/leaderboard?period=30d": "/api/leaderboard?period=30d",
        "GET /api/leaderboard?period=7d": "/api/leaderboard?period=7d",
        "GET /leaderboard (HTML)": "/leaderboard",
        f"GET /deal (most played, {heavy_deal[2]} games)": f"/deal/{heavy_deal[0]}/{heavy_deal[1]}",
        "GET /deal (played once)": f"/deal/{rare_deal[0]}/{rare_deal[1]}",
        f"GET /players (heaviest, {heavy_player[1]} games)": f"/players/{heavy_player[0]}",
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def measure(port: int, pages: dict[str, str], requests: int, warmup: int) -> dict[str, Any]:
    """Every page in turn, one request at a time; latencies in ms per page."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    latencies: dict[str, list[float]] = {label: [] for label in pages}
    sizes: dict[str, int] = {}
    failures: list[str] = []
    try:
        for round_ in range(warmup + requests):
            for label, path in pages.items():
                started = time.perf_counter()
                conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
                response = conn.getresponse()
                body = response.read()
                elapsed = (time.perf_counter() - started) * 1000
                if response.status != 200:
                    failures.append(f"{path}: {response.status} {body[:200]!r}")
                if round_ >= warmup:
                    latencies[label].append(elapsed)
                    sizes[label] = len(body)
    finally:
        conn.close()
    return {
        label: {
            "p50": percentile(lat, 0.50),
            "p95": percentile(lat, 0.95),
            "p99": percentile(lat, 0.99),
            "max": max(lat),
            "bytes": sizes[label],
        }
        for label, lat in latencies.items()
    } | {"failures": failures}


# -- EXPLAIN ANALYZE ------------------------------------------------------------------------------


def explain(url: str, pages: dict[str, str]) -> None:
    """Runs the statistics services in-process and EXPLAINs every statement they send."""
    from sqlalchemy import event

    from app.config import Settings
    from app.db.session import make_engine, make_sessionmaker
    from app.services.deals import Deals
    from app.services.leaderboard import Leaderboards, Period, player_record
    from app.services.seal import Sealer

    settings = Settings(database_url=url)
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    boards = Leaderboards(sessions, settings.leaderboard_min_games)
    deals = Deals(sessions, settings.deal_key_bytes, Sealer(settings.deal_key_bytes))
    seen: list[tuple[str, Any]] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _record(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, params))

    calls: dict[str, Callable[[], object]] = {
        "leaderboard all games, all time": lambda: boards.board(None, Period.ALL),
        "leaderboard corners, all time": lambda: boards.board("corners", Period.ALL),
        "leaderboard all games, 30 days": lambda: boards.board(None, Period.DAYS_30),
        "leaderboard all games, 7 days": lambda: boards.board(None, Period.DAYS_7),
    }
    for label, path in pages.items():
        parts = path.split("/")
        if path.startswith("/deal/"):
            calls[label] = partial(deals.summary, parts[2], parts[3])
        elif path.startswith("/players/"):
            calls[label] = partial(player_record, sessions, parts[2])
    try:
        for label, call in calls.items():
            call()  # warm
            seen.clear()
            started = time.perf_counter()
            call()
            total = (time.perf_counter() - started) * 1000
            print(f"\n### {label}: {total:.1f} ms in the service, {len(seen)} statements")
            recorded = list(seen)
            with engine.connect() as conn:
                raw = conn.connection.driver_connection
                assert raw is not None
                for statement, params in recorded:
                    with raw.cursor() as cur:
                        cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, params)
                        plan = "\n".join(r[0] for r in cur.fetchall())
                    print(f"\n{' '.join(statement.split())[:400]}\n{plan}")
    finally:
        engine.dispose()


# -- the queries before and after migration 0003 ------------------------------------------------

BEFORE_AFTER = [
    (
        "a deal's played and won",
        "SELECT count(*), coalesce(sum(CASE WHEN status = 'won' THEN 1 ELSE 0 END), 0) FROM game"
        " WHERE game = %(game)s AND deal = %(deal)s AND first_move_at IS NOT NULL",
        "SELECT played, won FROM deal_stats WHERE game = %(game)s AND deal = %(deal)s",
    ),
    (
        "a deal's fewest moves (and, alike, fastest)",
        # Before: every won game of the deal, sorted, the first kept (no LIMIT was sent).
        "SELECT game.*, player.name FROM game JOIN player ON player.id = game.player_id"
        " WHERE game.game = %(game)s AND game.deal = %(deal)s AND first_move_at IS NOT NULL"
        " AND status = 'won' ORDER BY moves, duration_ms",
        "SELECT game.id, player.name, game.status, game.moves, game.duration_ms,"
        " game.finished_at FROM game JOIN player ON player.id = game.player_id WHERE game.id IN"
        " (SELECT fewest_game_id FROM deal_stats WHERE game = %(game)s AND deal = %(deal)s)",
    ),
    (
        "each game's win rate, all time",
        "SELECT game, sum(played), sum(won) FROM player_stats WHERE game <> 'all' GROUP BY game",
        "SELECT game, sum(played), sum(won) FROM game_daily_stats GROUP BY game",
    ),
    (
        "each game's win rate, last 30 days",
        "SELECT game, sum(played), sum(won) FROM daily_stats WHERE game <> 'all'"
        " AND day >= %(since)s GROUP BY game",
        "SELECT game, sum(played), sum(won) FROM game_daily_stats WHERE day >= %(since)s"
        " GROUP BY game",
    ),
]


def compare(url: str, pages: dict[str, str], runs: int = 30) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    heavy = next(p for label, p in pages.items() if "most played" in label).split("/")
    params = {
        "game": heavy[2],
        "deal": int(heavy[3]),
        "since": (datetime.now(UTC).date() - timedelta(days=29)).isoformat(),
    }
    libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    lines = [
        f"| Query ({runs} runs each, most played deal) | before: median ms | p95 ms "
        "| after: median ms | p95 ms |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    with psycopg.connect(libpq) as conn, conn.cursor() as cur:
        for label, *queries in BEFORE_AFTER:
            cells = []
            for sql in queries:
                for _ in range(3):
                    cur.execute(sql, params)
                    cur.fetchall()
                times = []
                for _ in range(runs):
                    started = time.perf_counter()
                    cur.execute(sql, params)
                    cur.fetchall()
                    times.append((time.perf_counter() - started) * 1000)
                cells += [f"{percentile(times, 0.5):.2f}", f"{percentile(times, 0.95):.2f}"]
            lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


# -- the report -----------------------------------------------------------------------------------


def markdown(result: dict[str, Any], requests: int) -> str:
    lines = [
        f"| Page ({requests} requests each) | p50 ms | p95 ms | p99 ms | max ms | bytes (gzip) "
        f"| p95 ≤ {TARGET_P95_MS:.0f} ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for label, r in result.items():
        if label == "failures":
            continue
        verdict = "yes" if r["p95"] <= TARGET_P95_MS else "**no**"
        lines.append(
            f"| {label} | {r['p50']:.1f} | {r['p95']:.1f} | {r['p99']:.1f} | {r['max']:.1f} "
            f"| {r['bytes']:,} | {verdict} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DB, help="filled by fill_stats.py")
    parser.add_argument("--requests", type=int, default=300, help="measured requests per page")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured rounds first")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the queries")
    parser.add_argument(
        "--compare", action="store_true", help="time the queries before and after 0003"
    )
    parser.add_argument(
        "--cache-seconds", type=float, help="LEADERBOARD_CACHE_SECONDS for the server"
    )
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.requests <= 10_000 or args.warmup < 0 or args.workers < 1:
        parser.error("--requests 1..10000, --warmup >= 0, --workers >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    local_postgres(args.database_url, "measure")
    facts = machine_facts(args.database_url, database_size=True)
    pages = targets(args.database_url)
    if args.explain:
        explain(args.database_url, pages)
    compared = compare(args.database_url, pages) if args.compare else None
    load_before = os.getloadavg()
    with running_server(args.database_url, args.workers, args.cache_seconds) as port:
        result = measure(port, pages, args.requests, args.warmup)
    load_after = os.getloadavg()
    facts["load average before/after"] = f"{load_before[0]:.1f} / {load_after[0]:.1f}"
    print(f"\n== Statistics at scale, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC ==")
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    cache = "default" if args.cache_seconds is None else f"{args.cache_seconds:g} s"
    print(
        f"uvicorn {args.workers} workers; one request at a time; warm-up {args.warmup} rounds; "
        f"period leaderboard cache: {cache}\n"
    )
    print(markdown(result, args.requests))
    if compared:
        print(f"\n{compared}")
    if result["failures"]:
        print(f"\n{len(result['failures'])} answers were not 200, e.g. {result['failures'][:3]}")
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "pages": pages, "result": result}))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
