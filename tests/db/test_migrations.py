"""The Alembic migrations build exactly the schema the models describe, on SQLite and PostgreSQL,
and can be taken down to nothing and built up again."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from app.config import PROJECT_DIR
from app.db.models import Base
from app.db.session import make_engine
from tests.databases import fresh_postgres_database, sqlite_url


def _config(url: str) -> Config:
    config = Config(str(PROJECT_DIR / "alembic.ini"))
    config.set_main_option("sqlalchemy.url", url)
    config.attributes["configure_logger"] = False
    return config


def _fresh_database(backend: str, directory: Path) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if backend == "postgres":
        return fresh_postgres_database(f"ph_migrations_{worker}")
    return sqlite_url(directory, "migrations")


def _differences(url: str) -> list[Any]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


@pytest.mark.slow
def test_migrations_match_the_models(backend: str, tmp_path: Path) -> None:
    url = _fresh_database(backend, tmp_path)
    config = _config(url)
    command.upgrade(config, "head")
    assert _differences(url) == []
    assert set(Base.metadata.tables) <= _tables(url)

    command.downgrade(config, "base")
    assert _tables(url) <= {"alembic_version"}
    missing = {diff[1].name for diff in _differences(url) if diff[0] == "add_table"}
    assert missing == set(Base.metadata.tables)  # the comparison does look at the schema

    command.upgrade(config, "head")
    assert _differences(url) == []


@pytest.mark.slow
def test_every_revision_steps_down_and_up(backend: str, tmp_path: Path) -> None:
    url = _fresh_database(backend, tmp_path)
    config = _config(url)
    revisions = list(ScriptDirectory.from_config(config).walk_revisions("base", "heads"))
    assert len(ScriptDirectory.from_config(config).get_heads()) == 1, "one head only"
    for revision in reversed(revisions):  # oldest first
        command.upgrade(config, revision.revision)
        command.downgrade(config, "-1")
        command.upgrade(config, revision.revision)
    assert _differences(url) == []


def test_sealed_deals_migration_hides_a_running_races_deal_in_stored_events(
    backend: str, tmp_path: Path
) -> None:
    """0010: events of a race still running stop naming its deal (a reconnecting client reads
    them back from the table); a finished race's events keep theirs."""
    url = _fresh_database(backend, tmp_path)
    config = _config(url)
    command.upgrade(config, "0009")
    engine = make_engine(url)
    at = datetime(2026, 11, 25, 12, tzinfo=UTC)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO player (id, name, name_key, created_at, session_version) "
                    "VALUES ('p1', 'Ann', 'ann', :at, 1)"
                ),
                {"at": at},
            )
            for code, status in (("AAAAAA", "running"), ("BBBBBB", "finished")):
                conn.execute(
                    text(
                        "INSERT INTO room (code, game, created_by, status, created_at, active_at)"
                        " VALUES (:code, 'corners', 'p1', 'racing', :at, :at)"
                    ),
                    {"code": code, "at": at},
                )
                conn.execute(
                    text(
                        "INSERT INTO race (room_code, number, game, deal, starts_at, status) "
                        "VALUES (:code, 1, 'corners', 987654321, :at, :status)"
                    ),
                    {"code": code, "at": at, "status": status},
                )
                race = {"number": 1, "deal": 987654321, "status": status}
                for data in ({"type": "started", "race": race}, {"type": "joined"}):
                    kind = "race" if "race" in data else "room"
                    conn.execute(
                        text(
                            "INSERT INTO event (room_code, kind, data, created_at) "
                            "VALUES (:code, :kind, :data, :at)"
                        ),
                        {"code": code, "kind": kind, "data": json.dumps(data), "at": at},
                    )
        command.upgrade(config, "0010")
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT room_code, kind, data FROM event ORDER BY id")).all()
    finally:
        engine.dispose()
    deals = {
        (room, json.loads(data)["race"]["deal"]) for room, kind, data in rows if kind == "race"
    }
    assert deals == {("AAAAAA", None), ("BBBBBB", 987654321)}
    assert sum(1 for _, kind, _ in rows if kind == "room") == 2  # other events untouched
