"""Castle's End for the search (rules.md §5): every card is face up, so the search is exact.

Positions are ``State.piles``: foundations ``f1…f4`` (indices 0–3), tableau ``t1…t10`` (4–13).
"""

from __future__ import annotations

from collections.abc import Hashable

from app.solver.search import Child, Layout, Mv, Piles


class CastlesEndModel(Layout):
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

        **Safe move.** Once the base is chosen, a card X that may go to its foundation is
        played at once, as the only child, unless X is a base-rank card other than an Ace
        (its rank neighbour below is then its suit's *last* foundation card).

        *Proof.* Write "next" for foundation order. X's rank neighbour below (if any) is home;
        only X's neighbour above could ever be put on X. Take any winning line L from the
        position and build L' which starts by playing X home. Keep this invariant between a
        position of L and one of L': L' is L with a set H of cards moved home, H being the
        next cards of X's suit after L's foundation top, in order (at first H = {X}); every
        other card lies where it lies in L. Follow L move by move:

        - a card of H moves in the tableau: skip it (it is home in L');
        - a card of H goes home in L: skip it, and it leaves H (H stays the next run);
        - a card Y not in H goes home in L: then H is empty (Y would be the first of H), so
          Y may go home in L' too;
        - a card Y not in H moves onto a tableau card T: Y is the top of its pile in L', as
          in L. If T is not in H, T is the top of its pile in L' too, and the move is legal.
          If T is in H, Y is a rank neighbour of T; the one below is home in L or in H (no
          card of H is the base), so Y is T's neighbour above: if T is the last card of H,
          Y goes home in L' and joins H; otherwise Y is in H — not the case;
        - a card Y not in H goes to an empty pile: that pile is empty in L' too.

        Every card is home at the end of L, hence at the end of L'. So playing X never turns
        a winnable position into a lost one. (Castle's End has one deck, builds only by one
        rank in suit and never moves a card off a foundation; all three are used.)

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
        empty_f = -1
        for f in f_ids:
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
                continue
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
            if safe and (c % 13 != base or c % 13 == 0):
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
