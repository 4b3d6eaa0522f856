"""What a move's transaction costs PostgreSQL and the app, without HTTP and without the engine.

    .venv/bin/python bench/move_sql.py [--moves N] [--rounds R] [--database-url URL]

It drops and recreates the database (default ``ph_bench_sql`` on 127.0.0.1), starts one game,
and then, one move at a time on one connection, runs the app's own move transaction
(``app/db/move_store.py``) the two ways it has: lock the game row, read it, write the row
with the next version, append to the move log, commit. For each way it measures the CPU time of
this process and of the PostgreSQL backend serving it (from /proc), and the wall time, per
move. Rounds alternate the two ways so that a change in the machine's speed hits both alike.

- ``core``: SQLAlchemy Core in a transaction SQLAlchemy begins (what SQLite uses, and what
  PostgreSQL used before): five round trips (BEGIN, SELECT … FOR UPDATE, UPDATE, INSERT,
  COMMIT).
- ``two round trips``: PostgreSQL's way: prepared statements called with client-side binding,
  ``BEGIN; EXECUTE lock`` and ``EXECUTE update; EXECUTE insert; COMMIT``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import cpu_ticks, local_postgres, machine_facts, recreate_database
from sqlalchemy import Engine, text

from app.db.game_rows import game_values, move_values
from app.db.move_store import MoveStore, Transactions, core_transactions, postgres_transactions
from app.db.session import make_engine, make_move_engine, make_sessionmaker
from app.engine.deals import DEVELOPMENT_KEY
from app.services.games import Games
from app.services.players import Players, now
from app.services.seal import Sealer

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_sql"


def _cpu_seconds(pid: int) -> float:
    return cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as conn:  # the pool's only connection
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


class Way:
    def __init__(self, name: str, engine: Engine, transactions: Transactions) -> None:
        self.name = name
        self.engine = engine
        self.transaction = transactions
        self.backend = _backend_pid(engine)

    def moves(self, game_id: str, count: int) -> None:
        for _ in range(count):
            with self.transaction() as tx:
                locked = tx.lock(game_id, None)
                assert locked is not None
                stamp = now()
                row = replace(locked.row, version=locked.row.version + 1, updated_at=stamp)
                tx.write(game_values(row), move_values(row, "move", stamp, notation="t1-t2"))

    def measure(self, game_id: str, count: int) -> dict[str, float]:
        self.moves(game_id, count // 10)  # warm: pool, prepared statements, caches
        cpu, backend, wall = time.process_time(), _cpu_seconds(self.backend), time.perf_counter()
        self.moves(game_id, count)
        return {
            "app CPU µs": (time.process_time() - cpu) / count * 1e6,
            "PostgreSQL CPU µs": (_cpu_seconds(self.backend) - backend) / count * 1e6,
            "wall µs": (time.perf_counter() - wall) / count * 1e6,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=3000, help="moves per way per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", default=DEFAULT_URL, help="dropped and recreated")
    args = parser.parse_args(argv)
    recreate_database(local_postgres(args.database_url, "benchmark"))
    facts = machine_facts(args.database_url)

    engine = make_engine(args.database_url, pool_size=1)
    sessions = make_sessionmaker(engine)
    player, _ = Players(sessions).create_api_player("bench")
    store = MoveStore.open(engine)
    games = Games(sessions, DEVELOPMENT_KEY, store=store, sealer=Sealer(DEVELOPMENT_KEY))
    game_id = games.start(player.id, "quadrangle", 1).record.id
    store.close()
    move_engine = make_move_engine(engine)
    ways = [
        Way("core", engine, core_transactions(engine)),
        Way("two round trips", move_engine, postgres_transactions(move_engine)),
    ]

    results: dict[str, list[dict[str, float]]] = {way.name: [] for way in ways}
    for _ in range(args.rounds):
        for way in ways:
            results[way.name].append(way.measure(game_id, args.moves))
    for way in ways:
        way.engine.dispose()

    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(f"{args.rounds} rounds of {args.moves} moves per way; medians of the rounds\n")
    columns = list(next(iter(results.values()))[0])
    print("| Way | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for name, rounds in results.items():
        cells: list[Any] = [round(statistics.median(r[c] for r in rounds)) for c in columns]
        print(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
