"""Does a refused sign-in take as long whoever the name belongs to?

    .venv/bin/python bench/signin_timing.py                 # 60 rounds on a temporary SQLite
    .venv/bin/python bench/signin_timing.py --rounds 200 --threshold 0.10

A sign-in that fails fast for an unknown name, or for a name without a password, tells an
attacker which names have passwords worth guessing. The app verifies a dummy Argon2 hash in
those cases (app/services/players.py). This drives ``POST /signin`` through the whole app (CSRF
token, rate limits off, the database) for three kinds of refused sign-in, interleaved round by
round so that a busy machine slows all three alike:

- ``unknown``: a name nobody has;
- ``no-password``: a player's name, that player has no password;
- ``wrong-password``: a player's name with a password, and the wrong one.

It reports the median and p90 of each and the spread of the medians
((slowest − fastest) / fastest), and exits 1 when the spread is above ``--threshold``. A timing
claim, so it is a benchmark and never a timed unit test.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.databases import migrate

KINDS = ("unknown", "no-password", "wrong-password")


def token_of(client: TestClient) -> str:
    found = re.search(r'name="csrftoken" value="([^"]+)"', client.get("/account").text)
    assert found, "no CSRF token on the account page"
    return found.group(1)


def named(client: TestClient, token: str, name: str, password: str | None) -> None:
    answer = client.post("/account/name", data={"name": name, "csrftoken": token})
    assert answer.status_code in (200, 303), answer.text
    if password:
        answer = client.post("/account/password", data={"password": password, "csrftoken": token})
        assert answer.status_code in (200, 303), answer.text


def measure(rounds: int, warmup: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/signin.db"
        migrate(url)
        app = create_app(Settings(app_env="test", database_url=url, rate_limits_enabled=False))
        with TestClient(app) as owners, TestClient(app) as others, TestClient(app) as guesser:
            plain = f"Plain_{uuid.uuid4().hex[:8]}"
            locked = f"Locked_{uuid.uuid4().hex[:8]}"
            named(owners, token_of(owners), locked, "the real password, long enough")
            named(others, token_of(others), plain, None)
            token = token_of(guesser)
            names = {"unknown": f"Nobody_{uuid.uuid4().hex[:8]}", "no-password": plain}
            names["wrong-password"] = locked
            for i in range(warmup + rounds):
                order = KINDS[i % 3 :] + KINDS[: i % 3]  # rotate who goes first
                for kind in order:
                    data = {"name": names[kind], "password": "a wrong guess", "csrftoken": token}
                    began = time.perf_counter()
                    answer = guesser.post("/signin", data=data, follow_redirects=False)
                    took = time.perf_counter() - began
                    assert answer.status_code == 401, answer.text
                    if i >= warmup:
                        times[kind].append(took * 1000)
        app.state.services.engine.dispose()
        app.state.services.move_store.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threshold", type=float, default=0.10, help="largest spread allowed")
    args = parser.parse_args(argv)
    times = measure(args.rounds, args.warmup)
    medians = {kind: statistics.median(values) for kind, values in times.items()}
    spread = (max(medians.values()) - min(medians.values())) / min(medians.values())
    print(f"refused sign-ins, {args.rounds} rounds (+{args.warmup} warm-up), ms per request:")
    print("| Case | Median | p90 |")
    print("| --- | ---: | ---: |")
    for kind, values in times.items():
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"| {kind} | {medians[kind]:.1f} | {p90:.1f} |")
    print(f"spread of the medians: {spread:.1%} (threshold {args.threshold:.0%})")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load}")
    return 0 if spread <= args.threshold else 1


if __name__ == "__main__":
    sys.exit(main())
