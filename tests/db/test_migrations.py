"""The Alembic migrations build exactly the schema the models describe, on SQLite and PostgreSQL,
and can be taken down to nothing and built up again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

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
