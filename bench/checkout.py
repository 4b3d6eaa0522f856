"""What checking a pooled connection costs at checkout: the socket check the app does
(``app.db.session.idle_connection_is_dead``, one ``poll``) against SQLAlchemy's pre-ping (a
``SELECT 1`` round trip), on the local PostgreSQL.

    .venv/bin/python bench/checkout.py [--database-url URL] [--n 5000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg
from common import local_postgres

from app.db.session import idle_connection_is_dead


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--database-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--n", type=int, default=5000)
    args = parser.parse_args()
    parsed = local_postgres(args.database_url, "connect to")
    plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as conn:
        for name, check in (
            ("socket check (poll)", lambda: idle_connection_is_dead(conn)),
            ("pre-ping (SELECT 1)", lambda: conn.execute("SELECT 1").fetchone()),
        ):
            times = []
            for _ in range(args.n):
                t = time.perf_counter()
                check()
                times.append(time.perf_counter() - t)
            times.sort()
            print(
                f"{name}: median {statistics.median(times) * 1e6:.1f} µs, "
                f"p99 {times[len(times) * 99 // 100] * 1e6:.1f} µs"
            )


if __name__ == "__main__":
    main()
