"""Reading the solver's stored verdict on a deal (``deal_verdict``), for game states and deal
pages; and, for a deal it has not decided, the verdict of a finished game's stored analysis."""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.db.models import DealVerdict, Game, GameCoach


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


def analysed_winnable(db: Session | Connection, game_id: str) -> bool | None:
    """Whether a finished game's deal can be won, by the game's own stored analysis (stored
    only when decided; it searches the deal with every card known, as a judgement does): the
    verdict of a deal the solver has not judged, or could not decide within its budget."""
    text = db.execute(select(GameCoach.analysis).where(GameCoach.game_id == game_id)).scalar()
    return _analysed(text)


def analysed_deal_winnable(db: Session | Connection, game: str, deal: int) -> bool | None:
    """:func:`analysed_winnable` by any game of the deal whose analysis is stored."""
    text = db.execute(
        select(GameCoach.analysis)
        .join(Game, Game.id == GameCoach.game_id)
        .where(Game.game == game, Game.deal == deal, GameCoach.analysis.is_not(None))
        .limit(1)
    ).scalar()
    return _analysed(text)


def _analysed(text: str | None) -> bool | None:
    found = None if text is None else json.loads(text).get("deal_winnable")
    return found if isinstance(found, bool) else None
