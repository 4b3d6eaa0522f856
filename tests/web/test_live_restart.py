"""A real PostgreSQL restart under two app instances that fan events out with LISTEN/NOTIFY.

The server is one of the test's own (bench/pg_instance.py), so it can be stopped and started
without touching the shared one. A stream held across the restart keeps its place and gets
every event once; a client that was away reconnects with ``Last-Event-ID`` and gets what it
missed, once; live events flow again on the other instance as soon as it listens again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.databases import migrate
from tests.own_postgres import PgInstance
from tests.web.live_support import Api, SSEReader, uvicorn_server


def _play_when_back(host: Api, game_id: str, within: float = 30.0) -> dict[str, Any]:
    """A move as a careful client sends it after an outage: again after each 503."""
    deadline = time.monotonic() + within
    while True:
        state = host.get(f"/api/games/{game_id}")
        if state.status_code == 200:
            legal = state.json()["legal_moves"][0]
            body = {**legal, "version": state.json()["version"]}
            answer = host.post(f"/api/games/{game_id}/moves", json=body)
            if answer.status_code == 200:
                result: dict[str, Any] = answer.json()
                return result
            assert answer.status_code == 503, answer.text
        else:
            assert state.status_code == 503, state.text
        assert time.monotonic() < deadline, "the app did not serve again after the restart"
        time.sleep(0.2)


@pytest.mark.slow
def test_events_survive_a_postgres_restart(own_postgres: PgInstance, tmp_path: Path) -> None:
    url = own_postgres.create_database("ph_restart")
    migrate(url)
    with (
        uvicorn_server(url, tmp_path / "a.log") as a,
        uvicorn_server(url, tmp_path / "b.log") as b,
    ):
        host = Api(a)  # plays through instance A; every stream is held by instance B
        code = host.ok("POST", "/api/rooms", 201, json={"game": "corners"})["code"]
        game_id = host.ok("POST", f"/api/rooms/{code}/start")["race"]["games"][host.name]
        held = SSEReader(f"{b}/rooms/{code}/events")
        try:
            host.play_any(game_id)
            (first,) = [e for e in held.take(1) if e.event == "progress"]
            assert first.data["moves"] == 1

            own_postgres.stop("fast")  # what an operator's restart does to every connection
            time.sleep(1.0)
            own_postgres.start()

            _play_when_back(host, game_id)
            _play_when_back(host, game_id)
            across = held.take(2, timeout=20)
            assert [e.data["moves"] for e in across] == [2, 3]
            assert held.quiet(1.0) == []  # each once, nothing replayed twice
        finally:
            held.close()

        # A client that was away during all that reconnects from the first event it saw.
        back = SSEReader(f"{b}/rooms/{code}/events", {"Last-Event-ID": str(first.id)})
        try:
            caught_up = back.take(2)
            assert [e.data["moves"] for e in caught_up] == [2, 3]
            assert [e.id for e in caught_up] == [e.id for e in across]
            host.play_any(game_id)
            (live,) = back.take(1)
            assert live.data["moves"] == 4
            assert back.quiet(1.0) == []
        finally:
            back.close()
        host.close()
