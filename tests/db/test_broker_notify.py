"""Events at scale (app/db/broker.py, ``PostgresBroker``): a process batches its NOTIFYs (one
per few milliseconds, not one per move).

A burst of commits in one moment (here 100 ``publish`` calls in a row, as 100 moves committed
by one process's threads at once) reaches every listening process in a few NOTIFYs that carry
all of the ids, in order; before the broker's sender runs (an operator command, say) each
publish still notifies at once."""

from __future__ import annotations

import os
import time

import psycopg
import pytest
from sqlalchemy import create_engine

from app.db.broker import CHANNEL, PostgresBroker
from tests.aio import run
from tests.databases import fresh_postgres_database, migrate

BURST = 100

pytestmark = pytest.mark.postgres  # a database of its own on the test server


def _received(listener: psycopg.Connection[tuple[object, ...]], want: int) -> list[list[int]]:
    """The NOTIFY payloads of our channel, as id lists, until ``want`` ids have come."""
    batches: list[list[int]] = []
    deadline = time.monotonic() + 30
    while sum(map(len, batches)) < want:
        left = deadline - time.monotonic()
        assert left > 0, f"only {batches} arrived"
        for note in listener.notifies(timeout=left, stop_after=1):
            if note.channel == CHANNEL:
                batches.append([int(i) for i in note.payload.split(",")])
    return batches


def test_a_burst_of_commits_is_announced_in_a_few_notifies() -> None:
    url = fresh_postgres_database(f"ph_notify_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    migrate(url)
    engine = create_engine(url)
    broker = PostgresBroker(engine)
    with psycopg.connect(broker.dsn, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")

        # Not started (no sender thread): every publish is one NOTIFY of its own.
        broker.publish([1])
        broker.publish([2, 3])
        assert _received(listener, 3) == [[1], [2, 3]] and broker.notifies == 2

        async def burst() -> list[list[int]]:
            await broker.start()
            try:
                for event_id in range(10, 10 + BURST):
                    broker.publish([event_id])
                return _received(listener, BURST)  # the sender is a thread of its own
            finally:
                await broker.stop()  # its sender has counted every NOTIFY once stopped

        batches = run(burst())
        assert [i for batch in batches for i in batch] == list(range(10, 10 + BURST))
        sent = broker.notifies - 2
        assert sent == len(batches)
    engine.dispose()
    # One NOTIFY per batch window, however many commits fell in it: a loaded machine may
    # split the burst across a few windows, never into one NOTIFY per commit.
    assert 1 <= sent <= 10, sent
