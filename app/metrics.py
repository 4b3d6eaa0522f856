"""The app's Prometheus metrics (prometheus-client), served at ``GET /metrics``.

With several uvicorn workers, set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory before
the processes start (``scripts/docker-start.sh`` does): each worker writes its values there and
``/metrics`` adds them up, whichever worker answers.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter(
    "ph_requests_total", "HTTP requests answered, by method, route and status.",
    ["method", "route", "status"],
)  # fmt: skip
LATENCY = Histogram(
    "ph_request_duration_seconds", "Time to answer a request, by route.", ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)  # fmt: skip
MOVES = Counter("ph_moves_total", "Move requests answered, by status.", ["status"])
POOL_IN_USE = Gauge(
    "ph_db_connections_in_use", "Database connections checked out of a pool.", ["pool"],
    multiprocess_mode="livesum",
)  # fmt: skip
DB_ERRORS = Counter(
    "ph_db_errors_total",
    "Database errors: requests answered 503 (by error) and moves retried on a new connection.",
    ["kind"],
)
SHED = Counter(
    "ph_requests_shed_total",
    "Requests refused by admission: 503 (no turn free) or 429 (too many from one address).",
)
LIVE_ROOM_READS = Counter(
    "ph_live_room_reads_total", "Rooms read to render a room or race event for html streams."
)
LIVE_RENDERS = Counter(
    "ph_live_renders_total", "Event fragments rendered for html streams (once per variant)."
)


def exposition() -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and its content type."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
