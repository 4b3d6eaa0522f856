"""Checks for how piles build, each returning why a card does not fit (or None if it does).

The games' ``legal_moves`` use quick inline tests for speed; these spell out the reason for the
player when a move is refused (as words: app/engine/reasons.py). Property tests keep the two in
agreement.
"""

from __future__ import annotations

from app.engine.cards import rank_of, succ, suit_of
from app.engine.reasons import N_, CardRef, RankRef, Words
from app.engine.state import Pile

FOUNDATION_SIZE = 13


def _complete() -> Words:
    return Words(
        "foundation_complete",
        N_("That foundation is complete: it already holds %(size)s cards."),
        {"size": FOUNDATION_SIZE},
    )


def fits_up_in_suit(card: int, pile: Pile, *, wrap: bool, start: int | None) -> bool:
    """:func:`up_in_suit_refusal` is None, without building the reason (for legal moves)."""
    if not pile:
        return start is None or rank_of(card) == start
    if len(pile) >= FOUNDATION_SIZE:
        return False
    top = pile[-1]
    if suit_of(card) != suit_of(top) or (rank_of(top) == 13 and not wrap):
        return False
    return rank_of(card) == succ(rank_of(top))


def up_in_suit_refusal(card: int, pile: Pile, *, wrap: bool, start: int | None) -> Words | None:
    """A foundation building up in suit, starting from rank ``start`` when empty.

    ``start`` is None where no card may start the pile (it was dealt its base card).
    """
    if not pile:
        if start is None or rank_of(card) == start:
            return None
        return Words(
            "foundation_start",
            N_("Only %(rank)s can start an empty foundation."),
            {"rank": RankRef(start)},
        )
    if len(pile) >= FOUNDATION_SIZE:
        return _complete()
    top = pile[-1]
    if suit_of(card) != suit_of(top):
        return Words(
            "foundation_suit",
            N_("%(card)s cannot go on %(top)s: foundations build up in suit."),
            {"card": CardRef(card), "top": CardRef(top)},
        )
    nxt = succ(rank_of(top))
    if rank_of(top) == 13 and not wrap:
        return Words(
            "foundation_king_last",
            N_("%(top)s is the last card of that foundation: nothing goes on a King."),
            {"top": CardRef(top)},
        )
    if rank_of(card) != nxt:
        needed = top - 12 if rank_of(top) == 13 else top + 1
        return Words(
            "foundation_up_by_one",
            N_(
                "%(card)s cannot go on %(top)s: foundations build up by one in suit, so only "
                "%(needed)s goes there."
            ),
            {"card": CardRef(card), "top": CardRef(top), "needed": CardRef(needed)},
        )
    return None


def down_in_suit_refusal(card: int, pile: Pile) -> Words | None:
    """A foundation that builds down in suit from its King to the Ace, no wrap (Patriarchs)."""
    if len(pile) >= FOUNDATION_SIZE:
        return _complete()
    top = pile[-1]
    if suit_of(card) != suit_of(top):
        return Words(
            "foundation_down_suit",
            N_("%(card)s cannot go on %(top)s: foundations build in suit."),
            {"card": CardRef(card), "top": CardRef(top)},
        )
    if rank_of(card) != rank_of(top) - 1:
        return Words(
            "foundation_down_by_one",
            N_(
                "%(card)s cannot go on %(top)s: this foundation builds down by one in suit, so "
                "only %(needed)s goes there."
            ),
            {"card": CardRef(card), "top": CardRef(top), "needed": CardRef(top - 1)},
        )
    return None
