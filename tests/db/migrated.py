"""A migrated SQLite database in a moment: the migrations run once per test session, into a
template file, and each caller gets a copy of it (a migration takes about a second)."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import pytest

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
