"""A PostgreSQL server of a test's own (bench/pg_instance.py), for tests that stop and start
it: the shared server on this machine is never stopped."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The benchmarks are scripts that import each other by name; so do these tests, so that
# bench/pg_instance.py has one module name (mypy checks both directories).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from pg_instance import PgInstance, available


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PgInstance]:
    reason = available()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the tests that restart PostgreSQL: {reason}")
        pytest.skip(reason)
    with PgInstance() as pg:
        yield pg


__all__ = ["PgInstance", "available", "own_postgres"]
