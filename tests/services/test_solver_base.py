"""The solver service's state (app/services/solver_base.py): the budgets its searches get, with
time limits on and off, and a deal's stored verdict."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import DealVerdict
from app.db.session import make_engine, make_sessionmaker
from app.engine import DEVELOPMENT_KEY
from app.services.solver_base import SolverBase
from app.services.solver_jobs import BUSY_SLACK_SECONDS
from app.services.solver_pool import SolverPool
from tests.migrated import migrated_sqlite

UNUSED: Any = None  # the game service: not used by what is tested here


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    url = migrated_sqlite(tmp_path_factory, "solver_base")
    engine = make_engine(url)
    made = make_sessionmaker(engine)
    with made.begin() as db:
        stamp = datetime(2026, 11, 1, tzinfo=UTC)
        for deal, outcome in [(1, "winnable"), (3, "lost"), (4, "unknown")]:
            db.add(DealVerdict(game="castles-end", deal=deal, outcome=outcome, positions=1,
                               certified=False, created_at=stamp))  # fmt: skip
    yield made
    engine.dispose()


def base(sessions: sessionmaker[Session], *, time_limits: bool) -> SolverBase:
    pool = SolverPool(1)  # never started: nothing here searches
    return SolverBase(sessions, DEVELOPMENT_KEY, UNUSED, pool, time_limits=time_limits)


def test_with_time_limits_a_search_has_its_seconds_and_a_worker_some_slack(
    sessions: sessionmaker[Session],
) -> None:
    solver = base(sessions, time_limits=True)
    assert solver._budget(2.0) == 2.0
    assert solver._wait(2.0) == 2.0 + BUSY_SLACK_SECONDS


def test_without_time_limits_positions_alone_bound_a_search(
    sessions: sessionmaker[Session],
) -> None:
    solver = base(sessions, time_limits=False)
    assert solver._budget(2.0) is None
    assert solver._wait(2.0) is None  # a worker's answer is awaited however long it takes


@pytest.mark.parametrize(("deal", "verdict"), [(1, True), (3, False), (4, None), (2, None)])
def test_verdict_of_a_deal(
    sessions: sessionmaker[Session], deal: int, verdict: bool | None
) -> None:
    assert base(sessions, time_limits=True).verdict("castles-end", deal) is verdict
