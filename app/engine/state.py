"""The immutable state of one game in play, and the record of one step."""

from __future__ import annotations

from dataclasses import dataclass

from app.engine.moves import Move

Pile = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class State:
    """Everything needed to continue a game.

    ``piles`` follows the order of the game's ``Layout``; each pile is listed bottom → top, and
    for the stock the last card is the next one to be dealt. ``redeals`` counts redeals used.
    Base ranks are not stored: they are always readable from the foundations, which no card
    leaves except by Patriarchs' transfers, which never move a bottom card.
    """

    game: str
    piles: tuple[Pile, ...]
    redeals: int = 0


@dataclass(frozen=True, slots=True)
class Step:
    """One atomic step: a move together with every automatic action it triggered."""

    before: State
    move: Move
    after: State
    revealed: bool  # a hidden card came to light: this step can never be undone
    changed: tuple[str, ...]  # ids of the piles whose contents changed
