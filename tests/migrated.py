"""A migrated SQLite database in a moment: the migrations run once per test session, into a
template file, and each caller gets a copy of it (a migration takes about a second). For the
tests that need a database of their own but not the web app's fixtures."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest
from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Base
from app.db.session import make_engine, make_sessionmaker
from tests.databases import migrate, sqlite_url


@cache
def _template(base: Path) -> Path:
    directory = base / "migrated-template"
    directory.mkdir()
    migrate(sqlite_url(directory, "template"))
    return directory / "template.db"


def migrated_sqlite(factory: pytest.TempPathFactory, name: str) -> str:
    """The URL of a new SQLite file holding the schema at the migrations' head."""
    template = _template(factory.getbasetemp())
    copy = factory.mktemp(name) / f"{name}.db"
    shutil.copyfile(template, copy)
    return f"sqlite:///{copy}"


@contextmanager
def sqlite_sessions(factory: pytest.TempPathFactory, name: str) -> Iterator[sessionmaker[Session]]:
    """Sessions on a new migrated SQLite file, its engine disposed of at the end."""
    engine = make_engine(migrated_sqlite(factory, name))
    try:
        yield make_sessionmaker(engine)
    finally:
        engine.dispose()


def empty_tables(sessions: sessionmaker[Session]) -> None:
    """Every row gone (children first), so that tests sharing a module's database start alike."""
    with sessions.begin() as db:
        for table in reversed(Base.metadata.sorted_tables):
            db.execute(delete(table))
