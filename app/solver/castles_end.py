"""Castle's End for the search (rules.md §5): every card is face up, so the search is exact.

Positions are ``State.piles``: foundations ``f1…f4`` (indices 0–3), tableau ``t1…t10`` (4–13).
"""

from __future__ import annotations

from collections.abc import Hashable

from app.engine import Ruleset
from app.solver.search import Child, Mv, Piles


class CastlesEndModel:
    def __init__(self, rules: Ruleset) -> None:
        self.slug = rules.slug
        self.pile_ids = rules.pile_ids
        self.f = rules.foundations
        self.t = rules.tableau

    def won(self, piles: Piles) -> bool:
        return not any(piles[t] for t in self.t)

    def base(self, piles: Piles) -> int:
        for f in self.f:
            if piles[f]:
                return piles[f][0] % 13
        return -1

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # Which foundation holds which suit, and which tableau pile is where, change nothing:
        # every cards' place is known from the tableau once the base rank is.
        return (self.base(piles), tuple(sorted([piles[t] for t in self.t])))

    def dead(self, piles: Piles, redeals: int) -> bool:
        return False

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, safe=True)

    def all_children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, safe=False)

    def _children(self, piles: Piles, *, safe: bool) -> list[Child]:
        """Moves best first; a proven safe foundation move alone when there is one.

        **Safe move.** A card X that may go to its foundation and whose tableau neighbours
        (X's suit, one rank up and one down, no wrap) are each already on a foundation or do
        not exist (below an Ace, above a King) is played at once, as the only child.
        *Proof.* No card can ever be put on X in the tableau (only its neighbours could, and
        they never leave the foundations), and X can go nowhere but a foundation or an empty
        pile. Take any winning line from the position; delete every move of X from it and
        play X to its foundation first. X was always a top card in that line (nothing covers
        it), so deleting its moves only uncovers the card under it earlier and leaves piles
        empty that the line may have filled with X — every other move of the line stays
        legal (a move onto an empty pile needs an empty pile, and more are empty), and no
        other card of X's suit can reach the foundation before X in either line. So the
        shortened line still wins: playing X now never loses a winnable position.

        Pointless moves are not generated: a pile's only card going to an empty pile, and to
        empty piles other than the first (piles are interchangeable: see ``key``).
        """
        f_ids, t_ids = self.f, self.t
        base = self.base(piles)
        tops = [(t, piles[t][-1]) for t in t_ids if piles[t]]
        if base < 0:
            # E1: the first card to a foundation chooses the base (f1, the first empty one).
            first = f_ids[0]
            out: list[Child] = []
            for t, c in tops:
                new = list(piles)
                new[t] = piles[t][:-1]
                new[first] = (c,)
                out.append(((t, first, 1), tuple(new), 0))
            return out
        need: dict[int, int] = {}  # card face → foundation it may go on
        placed = [-1] * 4  # cards on the foundation of each suit (-1: none yet)
        empty_f = -1
        for f in f_ids:
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
                continue
            s = p[0] // 13
            placed[s] = len(p)
            if len(p) < 13:
                top = p[-1]
                need[top - 12 if top % 13 == 12 else top + 1] = f
        foundation: list[Child] = []
        for t, c in tops:
            f = need.get(c, -1)
            if f < 0 and c % 13 == base and empty_f >= 0:
                f = empty_f
            if f < 0:
                continue
            new = list(piles)
            new[t] = piles[t][:-1]
            new[f] = (*piles[f], c)
            child: Child = ((t, f, 1), tuple(new), 0)
            if safe and self._neighbours_home(c, base, placed):
                return [child]
            foundation.append(child)
        # Tableau moves: onto a same-suit neighbour, or into the first empty pile.
        by_card = {c: t for t, c in tops}
        empty_t = next((t for t in t_ids if not piles[t]), -1)
        uncover: list[Child] = []
        other: list[Child] = []
        for t, c in tops:
            src = piles[t]
            targets = []
            r = c % 13
            if r != 12 and c + 1 in by_card:
                targets.append(by_card[c + 1])
            if r != 0 and c - 1 in by_card:
                targets.append(by_card[c - 1])
            if empty_t >= 0 and len(src) > 1:
                targets.append(empty_t)
            for d in targets:
                new = list(piles)
                new[t] = src[:-1]
                new[d] = (*piles[d], c)
                mv: Mv = (t, d, 1)
                # Moves that empty a pile or uncover a card that can go home come first.
                if len(src) == 1 or src[-2] in need:
                    uncover.append((mv, tuple(new), 0))
                else:
                    other.append((mv, tuple(new), 0))
        return foundation + uncover + other

    @staticmethod
    def _neighbours_home(card: int, base: int, placed: list[int]) -> bool:
        suit, r = divmod(card, 13)
        on = placed[suit]
        return all(n < 0 or n > 12 or (n - base) % 13 < on for n in (r - 1, r + 1))
