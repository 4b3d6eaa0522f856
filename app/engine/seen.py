"""Which cards of a deal a game has shown: the slots of the deal that have been face up in it.

A **slot** is one place of the layout as dealt (pile by pile, bottom → top, numbered from 0): it
names one physical card, which matters in the games of two and four decks, where two cards can
share a face. The spectator view of a race (contract v3, "Sealed deals") shows a card only if
every racer has seen it, and it is the slots, not the faces, that say which cards those are: a
racer who has seen one 7♠ has not seen the other.

What a game has seen is read off its state alone, with no history to store:

- A face-down card never moves (it cannot be picked up; it turns face up where it lies, rules
  I5), and no card ever turns face down again. So a face-down card is still in the slot it was
  dealt to, and has never been seen.
- The stock is dealt from its top only (dealing, refills, Quadrangle's stock top), and nothing
  goes into it but a redeal, which needs it empty. Before the first redeal, the stock is the
  bottom of the stock as dealt, none of it seen yet; after one, it holds the turned-over waste,
  every card of which was seen.
- Undo never takes back a step that showed a card (contract v1), so what a game has seen only
  grows.

Every other slot has been face up at some moment: that is the set :func:`seen_slots` gives.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.engine.cards import code_of
from app.engine.ruleset import Ruleset, ShownPile
from app.engine.state import State


def _offsets(dealt: State) -> list[int]:
    out, at = [], 0
    for pile in dealt.piles:
        out.append(at)
        at += len(pile)
    return out


def slot_faces(dealt: State) -> tuple[str, ...]:
    """The card code of each slot of a deal (face-down cards included)."""
    return tuple(code_of(c if c >= 0 else ~c) for pile in dealt.piles for c in pile)


def seen_slots(rules: Ruleset, dealt: State, state: State) -> frozenset[int]:
    """The slots of ``dealt`` whose card has been face up at some moment of the game that is
    now at ``state`` (see the module doc for why the state alone tells)."""
    offsets = _offsets(dealt)
    never: set[int] = set()
    for index, pile in enumerate(state.piles):
        never.update(offsets[index] + depth for depth, card in enumerate(pile) if card < 0)
    if rules.stock >= 0 and state.redeals == 0:
        start = offsets[rules.stock]
        never.update(range(start, start + len(state.piles[rules.stock])))
    return frozenset(range(sum(len(p) for p in dealt.piles))) - never


def shared_faces(
    faces: tuple[str, ...], watched: frozenset[int], everyone: Iterable[frozenset[int]]
) -> frozenset[str]:
    """The faces that a spectator of the ``watched`` game may see: those whose every slot seen
    in that game has been seen in every game of ``everyone`` (each racer's seen slots).

    A face the watched game has seen in a slot some racer has not seen stays hidden, in
    whichever pile it now lies: with two decks, which of two 7♠ a racer holds cannot be told
    from its face, so the face is shown only when no copy of it could be the unseen one.
    """
    common = watched.intersection(*everyone)
    unsafe = {faces[slot] for slot in watched - common}
    return frozenset(faces[slot] for slot in watched) - unsafe


def only_faces(view: dict[str, ShownPile], faces: frozenset[str]) -> dict[str, ShownPile]:
    """A public view (:meth:`Ruleset.public_view`) with every card whose face is not in
    ``faces`` drawn face down (a pile shown only by its size stays as it is)."""
    return {
        pid: pile
        if pile.cards is None
        else ShownPile.of([c if c in faces else None for c in pile.cards])
        for pid, pile in view.items()
    }
