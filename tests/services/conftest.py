"""The services' tests that go through the app use the web tests' app fixtures; the statistics
tests share a database of their own and a clock (tests/services/stats_env.py)."""

from collections.abc import Iterator, Sequence

import pytest

from app.engine import Move, Ruleset, State
from tests.services.stats_env import env, stats_db
from tests.web.conftest import api, app, backend, client, db_url, guard, settings

__all__ = ["api", "app", "backend", "client", "db_url", "env", "guard", "settings", "stats_db"]


@pytest.fixture()
def replayed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many moves each call of the engine's replay applied."""
    counts: list[int] = []
    original = Ruleset.replay

    def counting(self: Ruleset, start: State, moves: Sequence[Move]) -> State:
        counts.append(len(moves))
        return original(self, start, moves)

    monkeypatch.setattr(Ruleset, "replay", counting)
    yield counts
