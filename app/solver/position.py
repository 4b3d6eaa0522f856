"""A position as the searches see it, and what a game's model must give them.

A model (one per game, app/solver/models.py) turns the engine's piles into fast successors,
keys and proven dead ends; every search (app/solver/searches.py) and the shortening of lines
(app/solver/lines.py) work through this protocol alone.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from app.engine import Ruleset

# Engine piles are tuples of card faces. A model may search on another immutable form of them
# (Castle's End: ``bytes``; see ``encoded``), typed as this one.
Piles = tuple[tuple[int, ...], ...]
# One step of the search: (source pile index, target pile index, count), or several such
# triples run together when a model joins moves that only make sense together.
Mv = tuple[int, ...]
Child = tuple[Mv, Piles, int]  # the move, the piles after it, redeals used after it


class Model(Protocol):
    """A game as the search sees it: fast successors over ``State.piles``-shaped tuples."""

    slug: str
    pile_ids: tuple[str, ...]

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Moves worth trying, best first. A single child may be a proven safe move."""
        ...

    def key(self, piles: Piles, redeals: int) -> Hashable:
        """Equal for positions with the same future (e.g. piles that only trade places)."""
        ...

    def won(self, piles: Piles) -> bool: ...

    def dead(self, piles: Piles, redeals: int) -> bool:
        """True only where a proven rule says no win can follow."""
        ...


class Layout:
    """What every game's model starts from: where its piles are, and when the game is won."""

    def __init__(self, rules: Ruleset) -> None:
        self.slug = rules.slug
        self.pile_ids = rules.pile_ids
        self.stock, self.waste = rules.stock, rules.waste
        self.f = rules.foundations
        self.t = rules.tableau
        self.r = rules.reserves
        # Every card is on a foundation when no other pile holds one.
        self.rest = tuple(i for i in range(len(rules.pile_ids)) if i not in rules.foundations)

    def won(self, piles: Piles) -> bool:
        return not any(piles[i] for i in self.rest)

    @staticmethod
    def span(indices: tuple[int, ...]) -> slice:
        """Piles that lie side by side as one slice (taken in one call where every position
        needs them)."""
        if not indices or indices != tuple(range(indices[0], indices[-1] + 1)):
            raise ValueError(f"the piles {indices} are not contiguous")
        return slice(indices[0], indices[-1] + 1)


def encoded(model: Model, piles: Piles) -> Piles:
    """``piles`` in the form the model searches on: a model may keep its piles in another
    immutable form (``encode``; idempotent), which its moves, keys and paths all accept."""
    encode = getattr(model, "encode", None)
    return piles if encode is None else encode(piles)
