"""What every test shares: the PostgreSQL marker, and nothing heavy.

The app fixtures (an app per database backend, clients that check every response) live in
tests/web/conftest.py, so that a run of the engine's or the solver's tests does not import the
web app (it starts in a fraction of a second).

A test that needs PostgreSQL is marked ``postgres`` here (any test on the ``postgres`` backend, or
using ``own_postgres``; the modules that make databases of their own say so themselves). A run
without the Postgres test server fails: skip those tests explicitly with ``-m "not postgres"``
or ``TEST_SKIP_POSTGRES=1`` (tests/databases.py).
"""

from __future__ import annotations

import pytest

from tests.skip_postgres import skip_postgres_reason

# own_postgres: a PostgreSQL server a test may stop and start (tests/own_postgres.py).
pytest_plugins = ["tests.own_postgres"]


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skipped = skip_postgres_reason()
    for item in items:
        params = getattr(item, "callspec", None)
        on_postgres = params is not None and params.params.get("backend") == "postgres"
        if on_postgres or "own_postgres" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
        if skipped and item.get_closest_marker("postgres") is not None:
            item.add_marker(pytest.mark.skip(reason=skipped))
