"""Quadruple Interchange for the search (rules.md §3), every card known: face-down cards
(stored as ``~face``) still cannot move until they turn up, but the search knows them."""

from __future__ import annotations

from collections.abc import Hashable

from app.solver.position import Child, Layout, Piles


def run_length(pile: tuple[int, ...]) -> int:
    if not pile or pile[-1] < 0:
        return 0
    n, card = 1, pile[-1]
    for i in range(len(pile) - 2, -1, -1):
        below = pile[i]
        if below != card + 1 or card % 13 == 12:
            break
        n, card = n + 1, below
    return n


class QuadrupleInterchangeModel(Layout):
    lds = True  # a limited-discrepancy search first (see search.solve_piles)

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # A foundation is known from its top card; piles of a kind are interchangeable; the
        # stock only loses its top (one pass).
        return (
            tuple(sorted([piles[f][-1] if piles[f] else -1 for f in self.f])),
            tuple(sorted([piles[t] for t in self.t])),
            piles[self.waste],
            len(piles[self.stock]),
        )

    def dead(self, piles: Piles, redeals: int) -> bool:
        return False

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Foundation moves, then moves that turn a card up or empty a pile, then other
        tableau moves, then dealing. No move is forced. Runs go to the first empty pile only,
        and never a whole pile into an empty one."""
        stock, waste = piles[self.stock], piles[self.waste]
        need: dict[int, int] = {}
        empty_f = -1
        for f in self.f:
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
            elif p[-1] % 13 != 12:
                need.setdefault(p[-1] + 1, f)
        fits: dict[int, list[int]] = {}
        empty_t = -1
        for t in self.t:
            p = piles[t]
            if not p:
                if empty_t < 0:
                    empty_t = t
            elif p[-1] >= 0 and p[-1] % 13 != 0:
                fits.setdefault(p[-1] - 1, []).append(t)
        home: list[Child] = []
        good: list[Child] = []
        rest: list[Child] = []

        def home_for(c: int) -> int:
            return empty_f if c % 13 == 0 else need.get(c, -1)

        if waste:
            c = waste[-1]
            f = home_for(c)
            targets = list(fits.get(c, ()))
            if empty_t >= 0:
                targets.append(empty_t)
            for dst in ([f] if f >= 0 else []) + targets:
                new = list(piles)
                new[self.waste] = waste[:-1]
                new[dst] = (*piles[dst], c)
                (home if dst == f else rest).append(((self.waste, dst, 1), tuple(new), 0))
        for src in self.t:
            p = piles[src]
            run = run_length(p)
            if not run:
                continue
            f = home_for(p[-1])
            for count in range(1, run + 1):
                bottom = p[-count]
                targets = [d for d in fits.get(bottom, ()) if d != src]
                if empty_t >= 0 and count < len(p):
                    targets.append(empty_t)
                if count == 1 and f >= 0:
                    targets.insert(0, f)
                for dst in targets:
                    remain = p[:-count]
                    if remain and remain[-1] < 0:  # I5: the card below turns face up
                        remain = (*remain[:-1], ~remain[-1])
                    new = list(piles)
                    new[src] = remain
                    new[dst] = piles[dst] + p[-count:]
                    child: Child = ((src, dst, count), tuple(new), 0)
                    if dst == f and count == 1:
                        home.append(child)
                    elif not remain or p[-count - 1] < 0:
                        good.append(child)
                    else:
                        rest.append(child)
        out = home + good + rest
        if stock:
            new = list(piles)
            new[self.stock] = stock[:-1]
            new[self.waste] = (*waste, stock[-1])
            out.append(((self.stock, self.waste, 1), tuple(new), 0))
        return out
