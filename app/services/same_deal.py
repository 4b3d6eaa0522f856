"""The same-deal rule (contract v2): two games of one deal hide the same cards.

So what a viewer may see of somebody else's game depends on the viewer's own games of its deal:

- an unfinished game of the deal: nothing at all (``SameDealInPlay``), or the other game would
  show the viewer's own face-down and stock cards;
- a finished game of the deal: everything a finished game shows (every card, the move log, the
  replay): they know the cards already;
- no game of the deal: a game in play as its owner sees it; a finished game the same way (its
  hidden cards stay hidden) without its move log or replay, which would let anyone copy a win.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from app.db.models import Game
from app.engine import Status
from app.services.errors import SameDealInPlay


class Relation(Enum):
    """A viewer's own games of a deal."""

    NONE = "none"  # never dealt it
    IN_PLAY = "in_play"  # has an unfinished game of it
    FINISHED = "finished"  # has finished a game of it and has none in play


def _relation(statuses: Iterable[str]) -> Relation:
    found = set(statuses)
    if Status.PLAYING in found:
        return Relation.IN_PLAY
    return Relation.FINISHED if found else Relation.NONE


def relation(db: Session | Connection, viewer: str | None, game: str, deal: int) -> Relation:
    if viewer is None:
        return Relation.NONE
    statuses = db.scalars(
        select(Game.status).where(Game.player_id == viewer, Game.game == game, Game.deal == deal)
    ).all()
    return _relation(statuses)


def relations(
    db: Session | Connection, viewer: str | None, deals: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], Relation]:
    """The viewer's relation to each of several deals, in one query."""
    wanted = set(deals)
    if viewer is None or not wanted:
        return dict.fromkeys(wanted, Relation.NONE)
    rows = db.execute(
        select(Game.game, Game.deal, Game.status).where(
            Game.player_id == viewer, Game.deal.in_({d for _, d in wanted})
        )
    ).all()
    seen: dict[tuple[str, int], list[str]] = {key: [] for key in wanted}
    for game, deal, status in rows:
        if (game, deal) in seen:
            seen[(game, deal)].append(status)
    return {key: _relation(statuses) for key, statuses in seen.items()}


def may_see(owner: str, viewer: str | None, related: Relation) -> bool:
    """Whether ``viewer`` may see another game of a deal at all (raises nothing)."""
    return viewer == owner or related is not Relation.IN_PLAY


def check_may_see(owner: str, viewer: str | None, related: Relation) -> None:
    if not may_see(owner, viewer, related):
        raise SameDealInPlay()


def sees_everything(owner: str, viewer: str | None, related: Relation) -> bool:
    """Whether a finished game shows ``viewer`` every card, its move log and its replay."""
    return viewer == owner or related is Relation.FINISHED
