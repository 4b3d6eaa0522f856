"""Patriarchs for the search (rules.md §6), every card known (stock order included)."""

from __future__ import annotations

from collections.abc import Hashable

from app.engine import Ruleset
from app.solver.search import Child, Piles

_MAX_REDEALS = 1


class PatriarchsModel:
    def __init__(self, rules: Ruleset) -> None:
        self.slug = rules.slug
        self.pile_ids = rules.pile_ids
        # Every card is on a foundation when no other pile holds one.
        self.rest = tuple(i for i in range(len(rules.pile_ids)) if i not in rules.foundations)
        self.stock, self.waste = rules.stock, rules.waste
        self.up = rules.foundations[:4]  # A → K, suits C D H S
        self.down = rules.foundations[4:]  # K → A
        self.f = rules.foundations
        self.r = rules.reserves

    def won(self, piles: Piles) -> bool:
        return not any(piles[i] for i in self.rest)

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # A foundation is known from its length; reserves are interchangeable.
        return (
            redeals,
            tuple(len(piles[f]) for f in self.f),
            tuple(sorted([piles[r] for r in self.r])),
            piles[self.stock],
            piles[self.waste],
        )

    def dead(self, piles: Piles, redeals: int) -> bool:
        """No dead-end rule is claimed for Patriarchs: the transfers between the two
        foundations of a suit (P5) and refills from the waste (P3) defeat the simple ordering
        arguments that work for Corners, so its losses are proved by exhaustion only."""
        return False

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Foundation moves from the waste and the reserves (the meeting-point transfers after
        them), then dealing, then the redeal. No move is forced."""
        out: list[Child] = []
        stock, waste = piles[self.stock], piles[self.waste]
        up, down = self.up, self.down
        for src in (self.waste, *self.r):
            p = piles[src]
            if not p:
                continue
            c = p[-1]
            s, r = divmod(c, 13)  # r: 0 = Ace … 12 = King
            targets = []
            if r == piles[up[s]][-1] % 13 + 1:
                targets.append(up[s])
            if r == piles[down[s]][-1] % 13 - 1:
                targets.append(down[s])
            for f in targets:
                new = list(piles)
                new[f] = (*piles[f], c)
                if src == self.waste:
                    new[src] = p[:-1]
                elif waste:  # P3: an emptied reserve takes the waste top, else the stock top
                    new[src] = (waste[-1],)
                    new[self.waste] = waste[:-1]
                elif stock:
                    new[src] = (stock[-1],)
                    new[self.stock] = stock[:-1]
                else:
                    new[src] = ()
                out.append(((src, f, 1), tuple(new), redeals))
        for s in range(4):
            a, k = piles[up[s]], piles[down[s]]
            if k[-1] % 13 == a[-1] % 13 + 1:
                if len(a) > 1:
                    new = list(piles)
                    new[up[s]], new[down[s]] = a[:-1], (*k, a[-1])
                    out.append(((up[s], down[s], 1), tuple(new), redeals))
                if len(k) > 1:
                    new = list(piles)
                    new[down[s]], new[up[s]] = k[:-1], (*a, k[-1])
                    out.append(((down[s], up[s], 1), tuple(new), redeals))
        if stock:
            new = list(piles)
            new[self.stock] = stock[:-1]
            new[self.waste] = (*waste, stock[-1])
            out.append(((self.stock, self.waste, 1), tuple(new), redeals))
        elif waste and redeals < _MAX_REDEALS:
            new = list(piles)
            new[self.stock], new[self.waste] = waste[::-1], ()
            out.append(((self.waste, self.stock, len(waste)), tuple(new), redeals + 1))
        return out
