"""Events across app instances: three uvicorn instances on one PostgreSQL, racers playing on
one instance while a stream on another reads their progress events.

    .venv/bin/python bench/instances.py                       # 3 instances, 30 racers, 10 s
    .venv/bin/python bench/instances.py --racers 60 --think-ms 50

Each racer (a thread, its own API player and one-racer room) plays on instance i % 3 and its
room's event stream is held on instance (i + 1) % 3. A LISTEN connection of the benchmark's own
counts the NOTIFYs the instances send and the event ids they carry: with batching
(app/db/broker.py) one NOTIFY carries every event a process committed in a few milliseconds.
Delivery = the event's arrival on the other instance − the arrival of the move's answer.
Ports 8300–8399 on 127.0.0.1, a fresh database ``ph_bench_instances``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2 as httpx
import psycopg
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def fresh(name: str) -> str:
    admin = create_engine(SERVER, isolation_level="AUTOCOMMIT")
    with admin.connect() as db:
        db.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        db.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = make_url(SERVER).set(database=name).render_as_string(hide_password=False)
    env = {**os.environ, "DATABASE_URL": url}
    subprocess.run(
        [sys.executable, "-m", "alembic", "upgrade", "head"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--racers", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--think-ms", type=float, default=100.0)
    args = parser.parse_args()
    url = fresh(os.environ.get("TEST_DB_PREFIX", "") + "ph_bench_instances")
    env = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": url,
        "RACE_COUNTDOWN_S": "0",
        "RATE_LIMITS_ENABLED": "false",
        "JSON_LOGS": "false",
        "SOLVER_JUDGE_SECONDS": "0",
    }
    ports = [8390 + i for i in range(args.instances)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "app.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(p),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
        )
        for p in ports
    ]
    bases = [f"http://127.0.0.1:{p}" for p in ports]
    try:
        for base in bases:
            for _ in range(300):
                try:
                    if httpx.get(f"{base}/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
        notes = {"notifies": 0, "ids": 0}
        stop = threading.Event()

        def listen() -> None:
            dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("LISTEN ph_events")
                for note in conn.notifies(timeout=args.seconds + 5, stop_after=None):
                    notes["notifies"] += 1
                    notes["ids"] += len(note.payload.split(","))
                    if stop.is_set():
                        break

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        answered: dict[tuple[str, int], float] = {}
        delays: list[float] = []
        moves = [0]
        lock = threading.Lock()

        def racer(i: int) -> None:
            play = httpx.Client(base_url=bases[i % len(bases)], timeout=10)
            token = play.post("/api/players", json={}).json()["token"]
            play.headers["authorization"] = f"Bearer {token}"
            code = play.post("/api/rooms", json={"game": "corners"}).json()["code"]
            game = next(
                iter(play.post(f"/api/rooms/{code}/start").json()["race"]["games"].values())
            )
            watch = httpx.Client(timeout=httpx.Timeout(args.seconds + 10))

            def read() -> None:
                with contextlib.suppress(httpx.HTTPError):  # the servers stop at the end
                    stream_events()

            def stream_events() -> None:
                with watch.stream("GET", f"{bases[(i + 1) % len(bases)]}/rooms/{code}/events") as s:
                    kind = ""
                    for line in s.iter_lines():
                        if line.startswith("event:"):
                            kind = line[6:].strip()
                        elif line.startswith("data:") and kind == "progress":
                            data = json.loads(line[5:])
                            at = time.monotonic()
                            with lock:
                                sent = answered.get((game, data["moves"]))
                                if sent is not None:
                                    delays.append(max(0.0, at - sent))
                        if stop.is_set():
                            return

            threading.Thread(target=read, daemon=True).start()
            time.sleep(0.5)
            while not stop.is_set():
                state = play.get(f"/api/games/{game}").json()
                if state["status"] != "playing" or not state["legal_moves"]:
                    return
                answer = play.post(
                    f"/api/games/{game}/moves",
                    json={**state["legal_moves"][0], "version": state["version"]},
                )
                if answer.status_code == 200:
                    with lock:
                        answered[(game, answer.json()["moves"])] = time.monotonic()
                        moves[0] += 1
                time.sleep(args.think_ms / 1000)

        threads = [
            threading.Thread(target=racer, args=(i,), daemon=True) for i in range(args.racers)
        ]
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        time.sleep(1.0)
        delays.sort()
        print(
            json.dumps(
                {
                    "instances": args.instances,
                    "racers": args.racers,
                    "seconds": args.seconds,
                    "moves": moves[0],
                    "moves_per_s": round(moves[0] / args.seconds, 1),
                    "events_delivered_cross_instance": len(delays),
                    "notifies": notes["notifies"],
                    "event_ids_notified": notes["ids"],
                    "ids_per_notify": round(notes["ids"] / max(1, notes["notifies"]), 2),
                    "delivery_ms_p50": round(1000 * statistics.median(delays), 1)
                    if delays
                    else None,
                    "delivery_ms_p99": round(1000 * delays[int(0.99 * (len(delays) - 1))], 1)
                    if delays
                    else None,
                },
                indent=1,
            )
        )
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)


if __name__ == "__main__":
    main()
