"""Two separate app instances (two uvicorn processes) on one PostgreSQL: a move accepted by
instance A reaches an event stream held by instance B (LISTEN/NOTIFY), also across a dropped
LISTEN connection, and a client that reconnects with Last-Event-ID gets every missed event once.

The PostgreSQL server here is the shared one, so this test does not restart it: it ends the
instances' LISTEN connections (``pg_terminate_backend``). A real restart, on a server of the
test's own, is tests/web/test_live_restart.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from app.db.broker import LISTENER_NAME
from tests.databases import fresh_postgres_database, migrate
from tests.web.live_support import Api, SSEReader, uvicorn_server

LISTENERS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    f"AND application_name = '{LISTENER_NAME}'"
)


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    url = fresh_postgres_database("ph_live_instances")
    migrate(url)
    where = tmp_path_factory.mktemp("instances")
    with (
        uvicorn_server(url, Path(where / "a.log")) as a,
        uvicorn_server(url, Path(where / "b.log")) as b,
    ):
        yield url, a, b


def _listeners(url: str) -> list[int]:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as db:
            return [int(pid) for pid in db.execute(text(LISTENERS)).scalars()]
    finally:
        engine.dispose()


def _drop_listeners(url: str) -> list[int]:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as db:
            pids = [int(pid) for pid in db.execute(text(LISTENERS)).scalars()]
            for pid in pids:
                db.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            return pids
    finally:
        engine.dispose()


def _wait_for_listeners(url: str, old: list[int], count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = _listeners(url)
        if len(now) >= count and not set(now) & set(old):
            return
        time.sleep(0.1)
    raise AssertionError("the instances did not listen again")


@pytest.mark.slow
@pytest.mark.postgres
def test_a_move_on_one_instance_reaches_a_stream_on_the_other(
    instances: tuple[str, str, str],
) -> None:
    url, a, b = instances
    host = Api(a)  # plays through instance A only
    code = host.ok("POST", "/api/rooms", 201, json={"game": "corners"})["code"]
    game_id = host.ok("POST", f"/api/rooms/{code}/start")["race"]["games"][host.name]
    assert len(_listeners(url)) == 2  # one LISTEN connection per instance

    stream = SSEReader(f"{b}/rooms/{code}/events")  # held by instance B
    try:
        host.play_any(game_id)
        (first,) = stream.take(1)
        assert first.event == "progress" and first.data["moves"] == 1

        # The LISTEN connections drop (as in a database restart); moves go on meanwhile.
        old = _drop_listeners(url)
        assert len(old) == 2
        host.play_any(game_id)
        host.play_any(game_id)
        _wait_for_listeners(url, old, 2)
        host.play_any(game_id)
        later = stream.take(3)
        assert [e.data["moves"] for e in later] == [2, 3, 4]
        assert stream.quiet(1.0) == []  # each event exactly once
    finally:
        stream.close()

    # A client that was away reconnects with Last-Event-ID and gets what it missed, once.
    missed_from = later[-1].id
    host.play_any(game_id)
    host.play_any(game_id)
    back = SSEReader(f"{b}/rooms/{code}/events", {"Last-Event-ID": str(missed_from)})
    try:
        caught_up = back.take(2)
        assert [e.data["moves"] for e in caught_up] == [5, 6]
        host.play_any(game_id)
        (live,) = back.take(1)
        assert live.data["moves"] == 7
        assert back.quiet(1.0) == []
    finally:
        back.close()
    host.close()
