"""Patriarchs for the search (rules.md §6), every card known (stock order included)."""

from __future__ import annotations

from collections.abc import Hashable

from app.engine import Ruleset
from app.solver.search import Child, Layout, Piles

_MAX_REDEALS = 1
_SUIT = bytes(c // 13 for c in range(256))  # face → suit, for ``bytes.translate``


class PatriarchsModel(Layout):
    lds = True  # a limited-discrepancy search first (see search.solve_piles)
    # The dead-end rule is checked only while the stock holds at most this many cards (0: once
    # it is empty). Checked at every last-pass position it halves the positions searched a
    # second, yet over deals 1..200 at 200,000 positions / 2 s it decided 57% of deals against
    # 54% when checked only once the stock is empty (bench/RESULTS.md, "Solver"): decided
    # deals are what counts, so it is checked everywhere.
    dead_stock_limit = 1_000

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
        """**Too few plays to uncover the waste, in the last pass.** With no redeal left, let
        the waste hold w1 (top), w2, …, wn and let V_j be the reserve cards, the stock's cards
        and w1…wj. Then the position is lost if, for some j < n, fewer than j cards of V_j
        could ever go home using only cards of V_j, or if not every remaining card could.

        *Proof.* No redeal is left (P4), so a waste card can leave the waste only from its top,
        either to a foundation (P2) or into a reserve emptied by a reserve card going home
        (P3); a card dealt from the stock goes on top of the waste. So before w(j+1) is the
        waste's top — the only way it can ever move — each of w1…wj has left the waste, each
        through a play of its own or of a reserve card: at least j plays (transfers, P5, play
        no card). All of them play cards of V_j, the only cards not lying under w(j+1). How
        many cards of V_j can go home at all, using only V_j, is bounded per suit: with the
        Ace side topped at rank a and the King side at rank k, the Ace side takes a+1, a+2, …
        only while V_j has each rank, the King side k−1, k−2, … likewise; if those two runs can
        close the gap between the sides, transfers may then move the meeting point anywhere,
        and every card of the suit in V_j is counted; otherwise the two runs are the bound
        (after the sides have passed each other they never meet again). If that bound is
        below j, w(j+1) never moves; if the bound over every card left is below their number,
        some card never goes home. Either way no win.

        Only the first test is made: the second never holds in a position reached from a deal
        (see the code), and a rule that says "lost" less often stays exact.
        """
        if redeals < _MAX_REDEALS or len(piles[self.stock]) > self.dead_stock_limit:
            return False  # (see ``dead_stock_limit``)
        # The bounds are kept per suit as the waste cards join V_j one by one: a card changes
        # a suit's runs only when it is the rank just past one of them (``_playable`` gives
        # the same numbers, computed afresh).
        # Which faces V_j holds (a run needs only one copy of a rank), and how many cards of
        # each suit, counted in C.
        pool = bytes(piles[self.stock]) + bytes([p[0] for p in [piles[r] for r in self.r] if p])
        present = set(pool)
        suits = pool.translate(_SUIT)
        aces: list[int] = []
        kings: list[int] = []
        ups: list[int] = []  # per suit: the first rank above the Ace side's run missing in V_j
        downs: list[int] = []  # … below the King side's run
        sizes: list[int] = []  # cards of the suit in V_j
        bound: list[int] = []
        for s in range(4):
            a, k = piles[self.up[s]][-1] % 13, piles[self.down[s]][-1] % 13
            first = s * 13
            up = a + 1
            while up <= 12 and first + up in present:
                up += 1
            down = k - 1
            while down >= 0 and first + down in present:
                down -= 1
            aces.append(a)
            kings.append(k)
            ups.append(up)
            downs.append(down)
            sizes.append(suits.count(s))
            bound.append(sizes[s] if a < k and up >= down + 1 else (up - a - 1) + (k - 1 - down))
        total = sum(bound)
        waste = piles[self.waste]
        n = len(waste)
        if total >= n - 1:
            return False  # see the last test below
        for j in range(1, n + 1):
            c = waste[n - j]  # w_j
            s, r = divmod(c, 13)
            present.add(c)
            sizes[s] += 1
            up, down = ups[s], downs[s]
            first = s * 13
            if r == up:
                while up <= 12 and first + up in present:
                    up += 1
                ups[s] = up
            if r == down:
                while down >= 0 and first + down in present:
                    down -= 1
                downs[s] = down
            a, k = aces[s], kings[s]
            b = sizes[s] if a < k and up >= down + 1 else (up - a - 1) + (k - 1 - down)
            total += b - bound[s]
            bound[s] = b
            if j < n and total < j:
                return True
            if total >= n - 1:
                # The bounds only grow with j, so no later j < n can fail the first test. The
                # second (every remaining card) never fails in a position reached from a deal:
                # a suit's remaining cards are then exactly those not on its foundations, so
                # each run reaches the other side (or the rank's end) and counts every one.
                # It is not checked: a rule that says "lost" less often is still exact.
                return False
        return False

    @staticmethod
    def _playable(counts: list[int], a: int, k: int) -> int:
        """At most how many of a suit's cards (``counts``: copies per rank index) can go home
        with the Ace side topped at rank index ``a`` and the King side at ``k`` (see ``dead``)."""
        up = a + 1
        while up <= 12 and counts[up]:
            up += 1
        down = k - 1
        while down >= 0 and counts[down]:
            down -= 1
        if a < k and up >= down + 1:  # the runs meet (or the sides meet already)
            return sum(counts)
        return (up - a - 1) + (k - 1 - down)

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
