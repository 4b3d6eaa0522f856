"""Corners for the search (rules.md §4), every card known (stock order included)."""

from __future__ import annotations

from collections.abc import Hashable

from app.solver.search import Child, Layout, Piles

_MAX_REDEALS = 2


class CornersModel(Layout):
    """Foundations f1…f4 (``self.f``) hold ♣ ♦ ♥ ♠ in that order."""

    lds = True  # a limited-discrepancy search first (see search.solve_piles)

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # Reserves are interchangeable: only which cards they hold matters (at a redeal the
        # vacant ones are refilled in order, but which vacant one gets which card changes
        # nothing later).
        return (
            redeals,
            tuple(len(piles[f]) for f in self.f),
            tuple(sorted([piles[r] for r in self.r])),
            piles[self.stock],
            piles[self.waste],
        )

    def dead(self, piles: Piles, redeals: int) -> bool:
        """**Buried in the last pass.** With no redeal left, a waste card can leave the waste
        only to its foundation, and only while it is the waste's top. So for two cards of one
        suit in the waste, the upper one must go home first. If the lower one is needed
        earlier on its foundation (it lies fewer steps from the foundation's top, counting
        with wrap), neither can ever go: the position is lost.

        *Proof.* In the last pass nothing can leave the waste except its top, to a foundation
        (C2; no redeal turns it over, C4). A foundation takes the cards of its suit in one
        fixed order (C1). Let L (lower) and U (upper) be such cards, L needed before U: L can
        leave only after U has left, U only after L is on the foundation — a cycle.
        """
        if redeals < _MAX_REDEALS:
            return False
        waste = piles[self.waste]
        if len(waste) < 2:
            return False
        tops = [piles[f][-1] % 13 for f in self.f]
        highest = [-1, -1, -1, -1]  # per suit: the latest-needed card seen above so far
        for c in reversed(waste):
            s = c // 13
            d = (c % 13 - tops[s]) % 13
            if d < highest[s]:
                return True
            highest[s] = d
        return False

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Foundation moves from the waste, then from the reserves, then dealing, then
        redealing. No move is forced: playing a reserve card takes the stock's top into that
        reserve, which changes what the waste will hold, so even a foundation move can be the
        wrong one."""
        out: list[Child] = []
        stock, waste = piles[self.stock], piles[self.waste]
        for src in (self.waste, *self.r):
            p = piles[src]
            if not p:
                continue
            c = p[-1]
            f = self.f[c // 13]
            fp = piles[f]
            if len(fp) < 13 and c % 13 == (fp[-1] + 1) % 13:
                new = list(piles)
                new[f] = (*fp, c)
                if src != self.waste and stock:
                    new[src] = (stock[-1],)
                    new[self.stock] = stock[:-1]
                else:
                    new[src] = p[:-1]
                out.append(((src, f, 1), tuple(new), redeals))
        if stock:
            new = list(piles)
            new[self.stock] = stock[:-1]
            new[self.waste] = (*waste, stock[-1])
            out.append(((self.stock, self.waste, 1), tuple(new), redeals))
        elif waste and redeals < _MAX_REDEALS:
            new = list(piles)
            fresh = waste[::-1]
            new[self.waste] = ()
            for r in self.r:  # C4: vacant reserves are filled in order r1…r5
                if not new[r] and fresh:
                    new[r] = (fresh[-1],)
                    fresh = fresh[:-1]
            new[self.stock] = fresh
            out.append(((self.waste, self.stock, len(waste)), tuple(new), redeals + 1))
        return out
