"""Migrations under PostgreSQL's advisory lock: any number of instances may migrate at once."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, text

from app.config import PROJECT_DIR
from tests.databases import fresh_postgres_database

STARTS = 4


@pytest.mark.slow
@pytest.mark.postgres
def test_four_migrations_at_once_on_an_empty_database_all_succeed_and_build_it_once() -> None:
    url = fresh_postgres_database(f"ph_migrate_race_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    env = {**os.environ, "DATABASE_URL": url, "APP_ENV": "test"}
    # Started together, before any of them has done anything: they meet on the empty database.
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "alembic", "upgrade", "head"],
            cwd=PROJECT_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(STARTS)
    ]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0] * STARTS, "\n".join(outputs)
    # The schema was built once: one process ran the first revision, the others found it done.
    first = [out for out in outputs if "Running upgrade  -> 0001" in out]
    assert len(first) == 1, "\n".join(outputs)
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            versions = db.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
            tables = db.execute(
                text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            ).scalar_one()
    finally:
        engine.dispose()
    assert len(versions) == 1
    assert tables > 10


@pytest.mark.slow
@pytest.mark.postgres
def test_four_migrate_services_at_once_build_the_schema_queue_and_key_once() -> None:
    # What compose's "migrate" and instances started with MIGRATE=1 run, all at once: the
    # schema, the job queue's tables, the DEAL_KEY's fingerprint and the pools' fill jobs.
    url = fresh_postgres_database(f"ph_migrate_cli_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    env = {**os.environ, "DATABASE_URL": url, "APP_ENV": "test", "CERTIFIED_POOL_TARGET": "5"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "app.cli", "migrate"],
            cwd=PROJECT_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(STARTS)
    ]
    outputs = [run.communicate(timeout=180)[0] for run in runs]
    assert [run.returncode for run in runs] == [0] * STARTS, "\n".join(outputs)
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            keys = db.execute(text("SELECT count(*) FROM app_meta")).scalar_one()
            fills = db.execute(
                text("SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'fill_pool'")
            ).scalar_one()
    finally:
        engine.dispose()
    assert keys == 1
    assert fills == 5  # one per game, however many migrations queued them
