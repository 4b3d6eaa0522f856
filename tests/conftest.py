"""What every test shares: the PostgreSQL and engine markers, and nothing heavy.

The app fixtures (an app per database backend, clients that check every response) live in
tests/web/conftest.py, so that a run of the engine's or the solver's tests does not import the
web app (it starts in a fraction of a second).

A test that needs PostgreSQL is marked ``postgres`` here (any test on the ``postgres`` backend, or
using ``own_postgres``; the modules that make databases of their own say so themselves). A run
without the Postgres test server fails: skip those tests explicitly with ``-m "not postgres"``
or ``TEST_SKIP_POSTGRES=1`` (tests/databases.py).

Every test under tests/engine is marked ``engine``: scripts/test.sh measures the engine's branch
coverage with those of them that are not Hypothesis property tests, and runs the property tests
with the rest of the suite, without coverage's tracing (it made them four times slower).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.skip_postgres import skip_postgres_reason

# own_postgres: a PostgreSQL server a test may stop and start (tests/own_postgres.py).
pytest_plugins = ["tests.own_postgres"]

ENGINE_TESTS = Path(__file__).resolve().parent / "engine"


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skipped = skip_postgres_reason()
    for item in items:
        params = getattr(item, "callspec", None)
        on_postgres = params is not None and params.params.get("backend") == "postgres"
        if on_postgres or "own_postgres" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
        if item.path.is_relative_to(ENGINE_TESTS):
            item.add_marker(pytest.mark.engine)
        if skipped and item.get_closest_marker("postgres") is not None:
            item.add_marker(pytest.mark.skip(reason=skipped))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test marked ``own_thread`` runs on a thread of its own. Procrastinate's synchronous
    API runs its coroutines through asgiref, which refuses a thread where an event loop is
    running, and in a pytest worker that has run a browser test the main thread has one:
    Playwright's synchronous API keeps its loop there (tests/aio.py does the same for
    asyncio.run)."""
    if pyfuncitem.get_closest_marker("own_thread") is None:
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    with ThreadPoolExecutor(1) as pool:
        pool.submit(pyfuncitem.obj, **arguments).result()
    return True
