"""Reading the solver's stored verdict on a deal (``deal_verdict``), for game states."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.db.models import DealVerdict


def deal_winnable(db: Session | Connection, game: str, deal: int) -> bool | None:
    """True: the deal can be won; False: proved lost; None: not judged or undecided."""
    outcome = db.execute(
        select(DealVerdict.outcome).where(DealVerdict.game == game, DealVerdict.deal == deal)
    ).scalar()
    return {"winnable": True, "lost": False}.get(outcome or "")


def deal_solution(db: Session | Connection, game: str, deal: int) -> list[str] | None:
    """The stored shortened winning line of a winnable deal, as move notations."""
    text = db.execute(
        select(DealVerdict.solution).where(
            DealVerdict.game == game, DealVerdict.deal == deal, DealVerdict.outcome == "winnable"
        )
    ).scalar()
    return None if text is None else text.split()
