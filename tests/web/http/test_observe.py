"""One JSON log line per request, and the Prometheus metrics at /metrics (one worker, and
several through prometheus-client's multiprocess mode)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from app.config import PROJECT_DIR
from app.metrics import POOL_IN_USE
from app.web.http.observe import JsonFormatter, PoolGauges, new_request_id
from tests.aio import run, until
from tests.web.support import move, start


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_each_request_logs_one_json_line(api: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    game = start(api, "corners", 31)
    m = game["legal_moves"][0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="patience_hall.access"):
        response = move(api, game["id"], f"{m['from']}-{m['to']}", 0, {"X-Request-ID": "abc-123"})
    assert response.status_code == 200
    assert response.headers["x-request-id"] == "abc-123"
    lines = [r for r in caplog.records if r.name == "patience_hall.access"]
    assert len(lines) == 1
    line = json.loads(JsonFormatter().format(lines[0]))
    assert line["request_id"] == "abc-123"
    assert line["route"] == "/api/games/{game_id}/moves"
    assert line["path"] == f"/api/games/{game['id']}/moves"
    assert line["status"] == 200 and line["method"] == "POST"
    assert isinstance(line["ms"], float) and line["ms"] >= 0
    assert line["level"] == "info" and "ts" in line


def test_a_request_id_that_is_not_sane_is_replaced(api: TestClient) -> None:
    response = api.get("/api/leaderboard", headers={"X-Request-ID": "no spaces <please>"})
    assert response.status_code == 200
    assert response.headers["x-request-id"] != "no spaces <please>"
    assert len(response.headers["x-request-id"]) == 32


def test_new_request_ids_are_32_hex_digits_and_do_not_repeat() -> None:
    made = [new_request_id() for _ in range(10_000)]
    assert len(set(made)) == len(made)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in made)


def test_metrics_count_requests_moves_latency_and_the_pools(api: TestClient) -> None:
    game = start(api, "corners", 32)
    before = _samples(api.get("/metrics").text)
    m = game["legal_moves"][0]
    assert move(api, game["id"], f"{m['from']}-{m['to']}", 0).status_code == 200
    exposed = api.get("/metrics")
    assert exposed.status_code == 200
    assert exposed.headers["content-type"].startswith("text/plain")
    after = _samples(exposed.text)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    route = "/api/games/{game_id}/moves"
    assert grew("ph_requests_total", method="POST", route=route, status="200") == 1
    assert grew("ph_moves_total", status="200") == 1
    assert grew("ph_request_duration_seconds_count", route=route) == 1
    assert any(name == "ph_db_connections_in_use" for name, _ in after)


_WORKER = """
import sys
from app.metrics import REQUESTS, MOVES
REQUESTS.labels("POST", "/api/games/{game_id}/moves", "200").inc()
MOVES.labels("200").inc(int(sys.argv[1]))
"""
_SCRAPE = """
from app.metrics import exposition
print(exposition()[0].decode())
"""


def test_several_workers_add_up_in_multiprocess_mode(tmp_path: Path) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for moves in ("2", "3"):  # two worker processes
        subprocess.run([sys.executable, "-c", _WORKER, moves], env=env, check=True, cwd=PROJECT_DIR)
    scraped = subprocess.run(
        [sys.executable, "-c", _SCRAPE], env=env, check=True, cwd=PROJECT_DIR,
        capture_output=True, text=True,
    )  # fmt: skip
    samples = _samples(scraped.stdout)
    assert samples[("ph_moves_total", (("status", "200"),))] == 5
    labels = (("method", "POST"), ("route", "/api/games/{game_id}/moves"), ("status", "200"))
    assert samples[("ph_requests_total", labels)] == 2


def test_a_lines_time_is_written_as_isoformat_would_write_it() -> None:
    formatter = JsonFormatter()
    rng = random.Random(26)
    moments = [1_764_350_000 + rng.random() * 1_000 for _ in range(20_000)]
    moments += [1_764_350_000.123, 1_764_350_000.9999996, 1_764_350_001.0005, 1_764_350_002.0]
    for created in moments:  # in turn, and back to a second already written
        expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
        assert formatter._ts(created) == expected, created


def test_the_pools_gauge_says_how_many_connections_are_out_when_scraped(api: TestClient) -> None:
    engine = api.app.state.services.engine  # type: ignore[attr-defined]
    main = ("ph_db_connections_in_use", (("pool", "main"),))
    with engine.connect(), engine.connect():
        held = _samples(api.get("/metrics").text)
    # The scrape's own reads are back in the pool by the time it samples.
    assert held[main] == 2
    assert _samples(api.get("/metrics").text)[main] == 0


def test_the_pools_gauges_are_sampled_every_so_often(tmp_path: Path) -> None:
    counted = create_engine(f"sqlite:///{tmp_path / 'counted.db'}")  # a QueuePool: it counts
    uncounted = create_engine("sqlite://", poolclass=StaticPool)  # one connection, no count
    gauges = PoolGauges().add(counted, "test_counted").add(uncounted, "test_uncounted")
    assert [gauge._labelvalues for gauge, _ in gauges.pools] == [("test_counted",)]
    gauge = POOL_IN_USE.labels("test_counted")

    async def sampled() -> list[float]:
        seen = []
        task = asyncio.create_task(gauges.keep_sampling(every_s=0))  # a sample every turn
        with counted.connect():
            await until(lambda: gauge._value.get() == 1)
            seen.append(gauge._value.get())
            with counted.connect():
                await until(lambda: gauge._value.get() == 2)
                seen.append(gauge._value.get())
        await until(lambda: gauge._value.get() == 0)
        seen.append(gauge._value.get())
        task.cancel()
        return seen

    assert run(sampled()) == [1, 2, 0]
