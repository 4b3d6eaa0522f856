"""Checks for how piles build, each returning why a card does not fit (or None if it does).

The games' ``legal_moves`` use quick inline tests for speed; these spell out the reason for the
player when a move is refused. Property tests keep the two in agreement.
"""

from __future__ import annotations

from app.engine.cards import RANK_LABELS, label_of, rank_of, succ, suit_of
from app.engine.state import Pile

FOUNDATION_SIZE = 13


def up_in_suit_refusal(card: int, pile: Pile, *, wrap: bool, start: int | None) -> str | None:
    """A foundation building up in suit, starting from rank ``start`` when empty.

    ``start`` is None where no card may start the pile (it was dealt its base card).
    """
    if not pile:
        if start is None or rank_of(card) == start:
            return None
        return f"Only {article(start)} {RANK_LABELS[start - 1]} can start an empty foundation."
    if len(pile) >= FOUNDATION_SIZE:
        return f"That foundation is complete: it already holds {FOUNDATION_SIZE} cards."
    top = pile[-1]
    if suit_of(card) != suit_of(top):
        return f"{label_of(card)} cannot go on {label_of(top)}: foundations build up in suit."
    nxt = succ(rank_of(top))
    if rank_of(top) == 13 and not wrap:
        return f"{label_of(top)} is the last card of that foundation: nothing goes on a King."
    if rank_of(card) != nxt:
        needed = label_of(top - 12 if rank_of(top) == 13 else top + 1)
        return (
            f"{label_of(card)} cannot go on {label_of(top)}: foundations build up by one "
            f"in suit, so only {needed} goes there."
        )
    return None


def down_in_suit_refusal(card: int, pile: Pile) -> str | None:
    """A foundation that builds down in suit from its King to the Ace, no wrap (Patriarchs)."""
    if len(pile) >= FOUNDATION_SIZE:
        return f"That foundation is complete: it already holds {FOUNDATION_SIZE} cards."
    top = pile[-1]
    if suit_of(card) != suit_of(top):
        return f"{label_of(card)} cannot go on {label_of(top)}: foundations build in suit."
    if rank_of(card) != rank_of(top) - 1:
        return (
            f"{label_of(card)} cannot go on {label_of(top)}: this foundation builds down by "
            f"one in suit, so only {label_of(top - 1)} goes there."
        )
    return None


def article(rank: int) -> str:
    return "an" if rank in (1, 8) else "a"
