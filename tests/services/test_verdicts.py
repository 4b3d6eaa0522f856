"""Reading the solver's stored verdict on a deal (app/services/verdicts.py): winnable, lost or
not known, and the winning line only of a winnable deal."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import DealVerdict
from app.db.session import make_engine, make_sessionmaker
from app.services.verdicts import deal_solution, deal_winnable
from tests.migrated import migrated_sqlite

STAMP = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    url = migrated_sqlite(tmp_path_factory, "verdicts")
    engine = make_engine(url)
    made = make_sessionmaker(engine)
    with made.begin() as db:
        for deal, outcome, solution in [
            (1, "winnable", "t1-f1 t2-f1"),
            (2, "lost", None),
            (3, "unknown", None),
            (4, "lost", "t1-f1"),  # a line stored with a lost deal is not a solution
        ]:
            db.add(
                DealVerdict(
                    game="corners",
                    deal=deal,
                    outcome=outcome,
                    solution=solution,
                    positions=10,
                    certified=False,
                    created_at=STAMP,
                )
            )
    yield made
    engine.dispose()


@pytest.mark.parametrize(("deal", "expected"), [(1, True), (2, False), (3, None), (99, None)])
def test_winnable_true_lost_false_otherwise_none(
    sessions: sessionmaker[Session], deal: int, expected: bool | None
) -> None:
    with sessions() as db:
        assert deal_winnable(db, "corners", deal) is expected


def test_a_verdict_belongs_to_its_game(sessions: sessionmaker[Session]) -> None:
    with sessions() as db:
        assert deal_winnable(db, "quadrangle", 1) is None
        assert deal_solution(db, "quadrangle", 1) is None


def test_the_solution_of_a_winnable_deal_as_move_texts(sessions: sessionmaker[Session]) -> None:
    with sessions() as db:
        assert deal_solution(db, "corners", 1) == ["t1-f1", "t2-f1"]


@pytest.mark.parametrize("deal", [2, 3, 4, 99])
def test_no_solution_unless_winnable(sessions: sessionmaker[Session], deal: int) -> None:
    with sessions() as db:
        assert deal_solution(db, "corners", deal) is None


def test_reads_on_a_core_connection_too(sessions: sessionmaker[Session]) -> None:
    """The move path reads verdicts on a Core connection, not a session."""
    bind = sessions.kw["bind"]
    with bind.connect() as conn:
        assert deal_winnable(conn, "corners", 2) is False
        assert deal_solution(conn, "corners", 1) == ["t1-f1", "t2-f1"]
