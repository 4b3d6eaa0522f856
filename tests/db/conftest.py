"""The database layer's tests that go through the app use the web tests' app fixtures."""

from tests.web.conftest import api, app, backend, client, db_url, guard, settings

__all__ = ["api", "app", "backend", "client", "db_url", "guard", "settings"]
