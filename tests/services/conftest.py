"""The services' tests that go through the app use the web tests' app fixtures; the statistics
tests share a database of their own and a clock (tests/services/stats_env.py)."""

from tests.services.stats_env import env, stats_db
from tests.web.conftest import api, app, backend, client, db_url, guard, settings

__all__ = ["api", "app", "backend", "client", "db_url", "env", "guard", "settings", "stats_db"]
