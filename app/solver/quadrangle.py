"""Quadrangle for the search (rules.md §2), every card known (stock order included)."""

from __future__ import annotations

from collections.abc import Hashable

from app.solver.search import Child, Layout, Piles


class QuadrangleModel(Layout):
    lds = True  # a limited-discrepancy search first (see search.solve_piles)

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # The stock only ever loses its top card (one pass), so its length says what it holds.
        # Foundations and tableau piles are interchangeable among themselves.
        return (
            tuple(sorted([piles[f] for f in self.f])),
            tuple(sorted([piles[t] for t in self.t])),
            piles[self.waste],
            len(piles[self.stock]),
        )

    def dead(self, piles: Piles, redeals: int) -> bool:
        return False

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Foundation moves, then tableau building, then dealing. No move is forced.

        Pointless moves are not generated: into empty piles other than the first (they are
        interchangeable), and a pile's only card into an empty pile when nothing refills it."""
        stock, waste = piles[self.stock], piles[self.waste]
        base = piles[self.f[0]][0] % 13
        need: dict[int, int] = {}
        empty_f = -1
        for f in self.f:
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
            elif len(p) < 13:
                top = p[-1]
                nxt = top - 12 if top % 13 == 12 else top + 1
                need.setdefault(nxt, f)
        fits: dict[int, list[int]] = {}  # card face → tableau piles it may go on
        empty_t = -1
        for t in self.t:
            p = piles[t]
            if p:
                top = p[-1]
                below = top + 12 if top % 13 == 0 else top - 1
                fits.setdefault(below, []).append(t)
            elif empty_t < 0:
                empty_t = t
        sources = [t for t in self.t if piles[t]]
        if waste:
            sources.append(self.waste)
        home: list[Child] = []
        build: list[Child] = []
        for src in sources:
            p = piles[src]
            c = p[-1]
            f = need.get(c, -1)
            if f < 0 and c % 13 == base and empty_f >= 0:
                f = empty_f
            targets = [d for d in fits.get(c, ()) if d != src]
            # A pile's only card into an empty pile is pointless unless emptying the pile
            # brings a refill (Q4). In play an empty pile means the waste and the stock are
            # empty too, but a position built by hand may have both.
            if src != self.waste and empty_t >= 0 and (len(p) > 1 or waste or stock):
                targets.append(empty_t)
            for dst in ([f] if f >= 0 else []) + targets:
                new = list(piles)
                new[dst] = (*piles[dst], c)
                rest = p[:-1]
                if not rest and src != self.waste:  # Q4: refill from the waste, else the stock
                    if waste:
                        rest = (waste[-1],)
                        new[self.waste] = waste[:-1]
                    elif stock:
                        rest = (stock[-1],)
                        new[self.stock] = stock[:-1]
                new[src] = rest
                (home if dst == f else build).append(((src, dst, 1), tuple(new), 0))
        out = home + build
        if stock:
            new = list(piles)
            new[self.stock] = stock[:-1]
            new[self.waste] = (*waste, stock[-1])
            out.append(((self.stock, self.waste, 1), tuple(new), 0))
        return out
