"""Whether this run skips the PostgreSQL tests: only when it says so (standard library only, so
that the root conftest can ask without importing SQLAlchemy)."""

from __future__ import annotations

import os

import pytest


def skip_postgres_reason() -> str | None:
    """Why the Postgres tests are skipped in this run, or None: only when asked to."""
    if os.environ.get("TEST_SKIP_POSTGRES", "").strip().lower() in ("", "0", "false", "no"):
        return None
    if os.environ.get("CI") == "true":
        raise pytest.UsageError("TEST_SKIP_POSTGRES is set, and CI must run the Postgres tests")
    return "TEST_SKIP_POSTGRES is set: the PostgreSQL tests are skipped"
