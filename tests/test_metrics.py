"""The app's Prometheus metrics (app/metrics.py): the text exposition, in one process and
added up across worker processes. The /metrics route: tests/web/test_observe.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.values import MultiProcessValue

from app.metrics import MOVES, POOL_IN_USE, exposition, process_exited


def test_one_process_exposes_its_own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    before = MOVES.labels(status="200")._value.get()
    MOVES.labels(status="200").inc()
    body, content_type = exposition()
    assert content_type == CONTENT_TYPE_LATEST
    text = body.decode()
    assert f'ph_moves_total{{status="200"}} {before + 1}' in text
    names = ("ph_requests_total", "ph_request_duration_seconds", "ph_db_connections_in_use",
             "ph_db_errors_total", "ph_requests_shed_total", "ph_live_renders_total")  # fmt: skip
    for name in names:
        assert f"# HELP {name} " in text, name


def test_several_workers_are_added_up_from_their_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    for pid, moves in ((101, 2), (102, 3)):  # what two workers wrote there
        value = MultiProcessValue(process_identifier=lambda pid=pid: pid)(  # type: ignore[no-untyped-call]
            "counter", "ph_moves", "ph_moves_total", ("status",), ("200",), MOVES._documentation
        )
        value.inc(moves)
    body, content_type = exposition()
    assert content_type == CONTENT_TYPE_LATEST
    # Their sum, whichever worker answers, and not this process's own registry.
    assert 'ph_moves_total{status="200"} 5.0' in body.decode()
    assert b"ph_request_duration_seconds" not in body


def test_an_exited_workers_live_gauges_are_dropped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert POOL_IN_USE._multiprocess_mode == "livesum"  # a dead worker's connections: none
    live = tmp_path / "gauge_livesum_4242.db"
    other = tmp_path / "gauge_livesum_4343.db"
    live.write_bytes(b"")
    other.write_bytes(b"")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    process_exited(4242)  # one process: nothing to do
    assert live.exists()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    process_exited(4242)
    assert not live.exists() and other.exists()
