"""Test databases: a SQLite file and a PostgreSQL database, each migrated with Alembic.

PostgreSQL comes from TEST_POSTGRES_URL (a server URL; each pytest worker gets a database of
its own on it). Without it, or with a server that cannot be used, a Postgres test fails, loudly:
a run that means to go without PostgreSQL says so, with ``-m "not postgres"`` (the marker is put
on every such test, tests/conftest.py) or ``TEST_SKIP_POSTGRES=1`` (they are skipped, with that
reason). Under CI=true nothing may skip them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.config import PROJECT_DIR
from tests.skip_postgres import skip_postgres_reason

BACKENDS = ("sqlite", "postgres")


def postgres_server_url() -> str | None:
    return os.environ.get("TEST_POSTGRES_URL") or None


def require_postgres() -> str:
    url = postgres_server_url()
    skipped = skip_postgres_reason()
    if skipped:
        pytest.skip(skipped)
    if url is None:
        pytest.fail(
            "TEST_POSTGRES_URL is not set: set it to the PostgreSQL test server's URL, or skip "
            'these tests explicitly (-m "not postgres", or TEST_SKIP_POSTGRES=1)',
            pytrace=False,
        )
    return url


def fresh_postgres_database(name: str) -> str:
    """Drop and recreate database ``name`` on the test server; returns its URL.

    ``TEST_DB_PREFIX`` (optional) goes in front of every name, so that two checkouts can run
    their suites side by side on one server without dropping each other's databases.
    """
    name = os.environ.get("TEST_DB_PREFIX", "") + name
    server = make_url(require_postgres())
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # the server is down or refuses us: loudly
        pytest.fail(
            f"PostgreSQL at {server.render_as_string()} is not usable: {exc}\n"
            'Start it, or skip the Postgres tests explicitly (-m "not postgres", or '
            "TEST_SKIP_POSTGRES=1).",
            pytrace=False,
        )
    finally:
        admin.dispose()
    return server.set(database=name).render_as_string(hide_password=False)


def sqlite_url(directory: Path, name: str) -> str:
    return f"sqlite:///{directory / name}.db"


def migrate(url: str, revision: str = "head") -> None:
    config = Config(str(PROJECT_DIR / "alembic.ini"))
    config.set_main_option("sqlalchemy.url", url)
    config.attributes["configure_logger"] = False
    command.upgrade(config, revision)


def downgrade(url: str, revision: str) -> None:
    config = Config(str(PROJECT_DIR / "alembic.ini"))
    config.set_main_option("sqlalchemy.url", url)
    config.attributes["configure_logger"] = False
    command.downgrade(config, revision)


def database_url(backend: str, directory: Path, name: str) -> str:
    if backend == "postgres":
        return fresh_postgres_database(name)
    return sqlite_url(directory, name)
