"""Patriarchs for the search (rules.md §6), every card known (stock order included)."""

from __future__ import annotations

from collections.abc import Hashable

from app.engine import Ruleset
from app.solver.search import Child, Layout, Piles

_MAX_REDEALS = 1


class PatriarchsModel(Layout):
    lds = True  # a limited-discrepancy search first (see search.solve_piles)

    def __init__(self, rules: Ruleset) -> None:
        super().__init__(rules)
        self.up = rules.foundations[:4]  # A → K, suits C D H S
        self.down = rules.foundations[4:]  # K → A

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # A foundation is known from its length; reserves are interchangeable.
        return (
            redeals,
            self._foundations_key(piles),
            tuple(sorted([piles[r] for r in self.r])),
            piles[self.stock],
            piles[self.waste],
        )

    def dead(self, piles: Piles, redeals: int) -> bool:
        """No dead-end rule is claimed for Patriarchs: the transfers between the two
        foundations of a suit (P5) and refills from the waste (P3) defeat the simple ordering
        arguments that work for Corners, so its losses are proved by exhaustion only."""
        return False

    def _foundations_key(self, piles: Piles) -> tuple[int, ...]:
        """Lengths of the foundations, except that a suit whose two foundations meet (P5) is
        one value whatever the meeting point: transfers slide it freely both ways, so every
        meeting point of a suit can reach every other (see ``children``)."""
        out: list[int] = []
        for up, down in zip(self.up, self.down):
            a, k = piles[up], piles[down]
            if k[-1] % 13 == a[-1] % 13 + 1:
                out += (-1, -1)
            else:
                out += (len(a), len(k))
        return tuple(out)

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Foundation moves from the waste and the reserves, then dealing, then the redeal.
        No move is forced.

        **Transfers (P5)** only happen while a suit's two foundations meet (King side one above
        the Ace side) and change nothing but the meeting point. From meeting, every play onto
        that suit ends the meeting for good (the two sides then overlap, and only grow apart),
        and nothing else looks at the meeting point. So the transfers are generated only as
        the slide that lets one visible card of the suit be played, joined to that play as one
        step (the fewest transfers: placing rank r on the Ace side after sliding it to r − 1,
        or on the King side after sliding to r, leaves the same two foundations, A…r and
        K…r). Nothing reachable is lost, and meeting points count as one position (``key``).
        """
        out: list[Child] = []
        stock, waste = piles[self.stock], piles[self.waste]
        up, down = self.up, self.down
        for src in (self.waste, *self.r):
            p = piles[src]
            if not p:
                continue
            c = p[-1]
            s, r = divmod(c, 13)  # r: 0 = Ace … 12 = King
            a, k = piles[up[s]][-1] % 13, piles[down[s]][-1] % 13
            slides: list[tuple[int, list[tuple[int, int]]]] = []  # (foundation, transfers)
            if k == a + 1:  # meeting: slide, then play (see above)
                via_up = abs(a - (r - 1)) if r >= 1 else 99
                via_down = abs(a - r) if r <= 11 else 99
                if via_up <= via_down:
                    slides.append((up[s], self._slide(up[s], down[s], a, r - 1)))
                else:
                    slides.append((down[s], self._slide(up[s], down[s], a, r)))
            else:
                if r == a + 1:
                    slides.append((up[s], []))
                if r == k - 1:
                    slides.append((down[s], []))
            for f, transfers in slides:
                new = list(piles)
                step: list[int] = []
                for t_src, t_dst in transfers:
                    new[t_dst] = (*new[t_dst], new[t_src][-1])
                    new[t_src] = new[t_src][:-1]
                    step += (t_src, t_dst, 1)
                new[f] = (*new[f], c)
                step += (src, f, 1)
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
                out.append((tuple(step), tuple(new), redeals))
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

    @staticmethod
    def _slide(up: int, down: int, a: int, target: int) -> list[tuple[int, int]]:
        """Transfers that move the Ace side's top from rank index ``a`` to ``target``."""
        if target < a:
            return [(up, down)] * (a - target)
        return [(down, up)] * (target - a)
