"""What the solver stores (app/db/models/solver.py): one verdict per deal, one hint count and
one coach record per game."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import DealVerdict, GameCoach, GameHint
from tests.db.models.conftest import AT, refused


def test_a_deal_has_one_verdict_and_is_not_certified_by_default(session: Session) -> None:
    session.add(DealVerdict(game="corners", deal=3, outcome="winnable", solution="t1-f",
                            created_at=AT))  # fmt: skip
    session.add(DealVerdict(game="castle", deal=3, outcome="lost", created_at=AT))
    session.flush()
    pool = select(DealVerdict.deal).where(DealVerdict.certified)
    assert session.scalars(pool).all() == []  # only what certify marks enters the pool
    verdict = session.get_one(DealVerdict, ("corners", 3))
    assert (verdict.positions, verdict.par) == (0, None)
    again = {"game": "corners", "deal": 3, "outcome": "unknown", "created_at": AT}
    assert "UNIQUE" in refused(session, DealVerdict, **again)


def test_a_games_hints_and_coach_are_one_row_each(session: Session) -> None:
    session.add(GameHint(game_id="g1", first_at=AT))
    session.add(GameCoach(game_id="g1", updated_at=AT))
    session.flush()
    assert session.get_one(GameHint, "g1").hints == 0
    coach = session.get_one(GameCoach, "g1")
    assert (coach.line_start, coach.line, coach.analysis) == (None, None, None)
    assert "UNIQUE" in refused(session, GameHint, game_id="g1", first_at=AT)
    assert "UNIQUE" in refused(session, GameCoach, game_id="g1", updated_at=AT)


def test_hints_belong_to_a_game_that_exists(session: Session) -> None:
    assert "FOREIGN KEY" in refused(session, GameHint, game_id="nothing", first_at=AT)
    assert "FOREIGN KEY" in refused(session, GameCoach, game_id="nothing", updated_at=AT)
