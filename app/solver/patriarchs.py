"""Patriarchs for the search (rules.md §6), every card known (stock order included).

Positions are ``State.piles``-shaped (stock, waste, ``f1…f8``, ``r1…r9``), but each pile is a
``bytes`` object (card faces 0–51) rather than a tuple, as for Castle's End: ``encode`` turns
engine piles into that form, and every method accepts either. Bytes slice, join and hash in C
and cache their hash, so the transposition key (one ``bytes``) costs a few C calls a position
where the tuple key hashed every card of the stock and the waste element by element.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import cast

from app.engine import Ruleset
from app.solver.position import Child, Layout, Mv, Piles

_MAX_REDEALS = 1
_ONE = tuple(bytes((c,)) for c in range(256))
_SEP = b"\xff"
_SUIT = tuple(c // 13 for c in range(52))
_RANK = tuple(c % 13 for c in range(52))  # 0 = Ace … 12 = King
_MEET = 254  # a suit's key byte while its foundations meet (else 13 × Ace top + King top)
_FREE: tuple[int, None] = (0, None)  # a move's price when it costs nothing and notes nothing


def encode(piles: Sequence[Sequence[int]]) -> tuple[bytes, ...]:
    """Engine piles (tuples of card faces) as the model's piles (``bytes``); idempotent."""
    return tuple(p if type(p) is bytes else bytes(p) for p in piles)


# The model's piles are ``tuple[bytes, ...]`` at run time, typed as ``Piles`` for the search.
_pack: Callable[[list[bytes]], Piles] = tuple  # type: ignore[assignment]


class PatriarchsModel(Layout):
    # The search is the priced one (``price``; searches.priced), not a limited-discrepancy
    # search: over deals 1..200 at 200,000 positions each it won 182 against 141.
    # The dead-end rule is checked only while the stock holds at most this many cards (0: once
    # it is empty). Checking it everywhere decided more deals than once the stock is empty
    # (bench/RESULTS.md, "Solver"); with the priced search, which spends most positions in the
    # last pass, it held at 168 of 93,000 last-pass positions with 30–39 cards in the stock and
    # never above (deals 11, 26–28). Deals 1..200 at 200,000 positions: 182 won whether the
    # limit is 35, 30 or 25 (the same deals), at 98k, 104k and 111k positions a second (83–85).
    dead_stock_limit = 25

    def __init__(self, rules: Ruleset) -> None:
        super().__init__(rules)
        self.up = rules.foundations[:4]  # A → K, suits C D H S
        self.down = rules.foundations[4:]  # K → A
        self._pairs = tuple(zip(self.up, self.down))
        self._sources = (self.waste, *self.r)
        self._rs = self.span(self.r)  # the reserves, side by side

    def encode(self, piles: Piles) -> Piles:
        return cast(Piles, encode(piles))

    def won(self, piles: Piles) -> bool:
        # Cards leave the stock long before the end: while it holds any, nothing else needs a
        # look (this runs for every position generated).
        return not piles[self.stock] and not piles[self.waste] and super().won(piles)

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # A foundation is known from its top (A…top, K…top); a suit whose foundations meet is
        # one value whatever the meeting point (see ``children``); reserves are
        # interchangeable. Stock and waste follow whole, split by a byte no card has.
        ps: tuple[bytes, ...] = piles if type(piles[0]) is bytes else encode(piles)  # type: ignore[comparison-overlap]
        head = [redeals]
        for u, d in self._pairs:
            a, k = _RANK[ps[u][-1]], _RANK[ps[d][-1]]
            head.append(_MEET if k == a + 1 else 13 * a + k)
        reserves = sorted(b"".join(ps[self._rs]))
        return b"".join((bytes(head), bytes(reserves), _SEP, ps[self.stock], _SEP, ps[self.waste]))

    def dead(self, piles: Piles, redeals: int) -> bool:
        """**Too few plays to uncover the waste, in the last pass.** With no redeal left, let
        the waste hold w1 (top), w2, …, wn, let R be the reserve cards, S the stock's cards,
        W_j = {w1…wj} and V_j = R ∪ S ∪ W_j. The position is lost if, for some j < n, fewer
        than j cards of R ∪ W_j could go home using only cards of V_j.

        *Proof.* No redeal is left (P4), so w(j+1) can move only once it is the waste's top.
        Until then the waste is never empty, so every play home takes exactly one card off the
        waste: its own card (from the waste) or the waste top that refills the reserve it left
        (P3); every deal puts one stock card on the waste; transfers (P5) move no waste card.
        For w(j+1) to surface, the j cards above it and the D cards dealt meanwhile must leave:
        j + D plays. Each plays a distinct card of V_j (the rest lie under w(j+1)), and at most
        D of them are stock cards (a stock card is played only after it is dealt), so at least
        j plays are of cards of R ∪ W_j. How many cards of R ∪ W_j can go home at all, using
        only V_j, is bounded per suit: with the Ace side topped at rank a and the King side at
        k, the Ace side takes a+1, a+2, … only while V_j has each rank, the King side k−1,
        k−2, … likewise. If the two runs can close the gap between the sides, every card of
        the suit in R ∪ W_j is counted. Otherwise the sides never meet (no transfer), the runs
        are disjoint and each takes one card per rank, so at most one card per run rank that
        R ∪ W_j holds is counted. If that bound is below j, w(j+1) never moves: no win.

        (The rule as first written counted the cards of V_j, stock included; this bound is
        never larger, so the rule says "lost" wherever that one did, and more often.)
        """
        ps: tuple[bytes, ...] = piles if type(piles[0]) is bytes else encode(piles)  # type: ignore[comparison-overlap]
        if redeals < _MAX_REDEALS or len(ps[self.stock]) > self.dead_stock_limit:
            return False  # (see ``dead_stock_limit``)
        waste = ps[self.waste]
        n = len(waste)
        if n < 2:
            return False  # the test needs some j with 1 ≤ j < n
        # The bounds are kept per suit as the waste cards join V_j and R ∪ W_j one by one: a
        # run grows only when a card of the rank just past it joins V_j, and a count only when
        # a card joins R ∪ W_j (tests: the same answers as the rule computed afresh per j).
        held = b"".join(ps[self._rs])
        present = set(ps[self.stock])  # faces in V_j (a run needs one copy of a rank)
        present.update(held)
        counted = set(held)  # faces in R ∪ W_j
        sizes = [0, 0, 0, 0]  # cards of each suit in R ∪ W_j
        for c in held:
            sizes[_SUIT[c]] += 1
        # Per suit (index assignment: this runs for every position the search enters):
        aces = [0, 0, 0, 0]
        kings = [0, 0, 0, 0]
        ups = [0, 0, 0, 0]  # the first rank above the Ace side's run missing in V_j
        downs = [0, 0, 0, 0]  # … below the King side's run
        for s, (u, d) in enumerate(self._pairs):
            a, k = _RANK[ps[u][-1]], _RANK[ps[d][-1]]
            first = 13 * s
            up = a + 1
            while up <= 12 and first + up in present:
                up += 1
            down = k - 1
            while down >= 0 and first + down in present:
                down -= 1
            aces[s] = a
            kings[s] = k
            ups[s] = up
            downs[s] = down
        runs = [0, 0, 0, 0]  # per suit: run ranks that R ∪ W_j holds
        for c in counted:
            s, r = _SUIT[c], _RANK[c]
            if aces[s] < r < ups[s] or downs[s] < r < kings[s]:
                runs[s] += 1
        # A suit whose runs meet counts every card it has in R ∪ W_j, and goes on meeting.
        meet = [False, False, False, False]
        total = 0
        for s in range(4):
            if aces[s] < kings[s] and ups[s] >= downs[s] + 1:
                meet[s] = True
                total += sizes[s]
            else:
                total += runs[s]
        if total >= n - 1:
            return False  # the bounds only grow with j (see below)
        for j, c in enumerate(waste[:0:-1], 1):  # w_1 … w_(n-1)
            s = _SUIT[c]
            sizes[s] += 1
            if meet[s]:
                total += 1
            else:
                r = _RANK[c]
                a, k = aces[s], kings[s]
                if c not in counted:
                    counted.add(c)
                    if a < r < ups[s] or downs[s] < r < kings[s]:
                        runs[s] += 1
                        total += 1
                if c not in present:  # only a face new to V_j can be a run's missing rank
                    present.add(c)
                    first = 13 * s
                    up, down, before = ups[s], downs[s], runs[s]
                    if r == up:
                        while up <= 12 and first + up in present:
                            runs[s] += first + up in counted
                            up += 1
                        ups[s] = up
                    if r == down:
                        # (When both runs end at r they meet now: the count is not used.)
                        while down >= 0 and first + down in present:
                            runs[s] += first + down in counted
                            down -= 1
                        downs[s] = down
                    if a < k and up >= down + 1:
                        meet[s] = True
                        total += sizes[s] - before
                    else:
                        total += runs[s] - before
            if total < j:
                return True
            if total >= n - 1:
                # Adding cards to V_j and R ∪ W_j never shrinks a run or a count, so no later
                # j < n can fail.
                return False
        return False

    def may_end(self, move: Mv) -> bool:
        """Whether the priced search tests ``dead`` after ``move``: after dealing only (leaving
        a test out is always sound: the rule only cuts). A play mostly keeps the rule's slack:
        a play of the waste's top w1 turns each W_(j+1) into W_j without w1, which was counted
        as the first card of its run, so the bound and j both fall by one; a play from a
        reserve takes a counted card home and moves w1 from the waste to the reserves, the
        same. Dealing puts a new card on the waste, where it can bury the cards below. (On
        deals 1–8 at 60,000 positions each, 76,362 positions entered with the test after every
        move, 77,202 with it after dealing only; on deals 26–28, a fifth less time a
        position.)"""
        return move[0] == self.stock

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
        ps: tuple[bytes, ...] = piles if type(piles[0]) is bytes else encode(piles)  # type: ignore[comparison-overlap]
        out: list[Child] = []
        stock_i, waste_i = self.stock, self.waste
        stock, waste = ps[stock_i], ps[waste_i]
        up, down = self.up, self.down
        for src in self._sources:
            p = ps[src]
            if not p:
                continue
            c = p[-1]
            s, r = _SUIT[c], _RANK[c]  # r: 0 = Ace … 12 = King
            a, k = _RANK[ps[up[s]][-1]], _RANK[ps[down[s]][-1]]
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
                new = list(ps)
                step: list[int] = []
                for t_src, t_dst in transfers:
                    new[t_dst] = new[t_dst] + new[t_src][-1:]
                    new[t_src] = new[t_src][:-1]
                    step += (t_src, t_dst, 1)
                new[f] = new[f] + _ONE[c]
                step += (src, f, 1)
                if src == waste_i:
                    new[src] = p[:-1]
                elif waste:  # P3: an emptied reserve takes the waste top, else the stock top
                    new[src] = waste[-1:]
                    new[waste_i] = waste[:-1]
                elif stock:
                    new[src] = stock[-1:]
                    new[stock_i] = stock[:-1]
                else:
                    new[src] = b""
                out.append((tuple(step), _pack(new), redeals))
        if stock:
            new = list(ps)
            new[stock_i] = stock[:-1]
            new[waste_i] = waste + stock[-1:]
            out.append(((stock_i, waste_i, 1), _pack(new), redeals))
        elif waste and redeals < _MAX_REDEALS:
            new = list(ps)
            new[stock_i], new[waste_i] = waste[::-1], b""
            out.append(((waste_i, stock_i, len(waste)), _pack(new), redeals + 1))
        return out

    def price(
        self, piles: Piles, redeals: int, kids: list[Child], note: Hashable | None
    ) -> list[tuple[int, Hashable | None]]:
        """What each move costs the priced search, and the note it passes on (the plays the
        line is waiting past, or None).

        Plays cost nothing, in any order (orders that meet are one position), and so does
        the redeal. Dealing while some play is there costs one — two if the waste's top could
        go home, as dealing buries it — except while the line *waits*: once it has dealt past
        some plays, dealing past the same plays again costs nothing, and so does taking one
        of them at last; and dealing onto an empty waste costs nothing (it buries nothing, and
        a reserve card played then would pull the very card dealt). Good lines often hold a
        reserve card back for several deals, until the card it would pull from the waste is
        the one they want, or leave a card for its twin; counted deal by deal, each deal of
        that wait was one more discrepancy. Prices only order the search: every move is still
        tried. (Deals 1..200, 200,000 positions each: 141 won by the limited-discrepancy
        search, 156 with waiting priced once, 169 with plays free, 174 with the waste's top
        priced two, 182 with an empty waste and the redeal free.)
        """
        n = len(kids)
        if not n:
            return []
        stock_i = self.stock
        last = kids[-1][0]  # dealing or the redeal comes last (``children``), if at all
        if last[0] != stock_i or n == 1:
            return [_FREE] * n  # plays, and the redeal if it is there: all free
        plays = frozenset([mv for mv, _, _ in kids[:-1]])
        waited = note if isinstance(note, frozenset) else frozenset()
        out: list[tuple[int, Hashable | None]] = [_FREE] * n
        if not piles[self.waste] or (waited and waited.issuperset(plays)):
            out[-1] = (0, waited | plays)
        else:
            first = kids[0][0]  # a play of the waste's top comes first, if there is one
            buries = first[-3] == self.waste and first not in waited
            out[-1] = (2 if buries else 1, waited | plays)
        return out

    @staticmethod
    def _slide(up: int, down: int, a: int, target: int) -> list[tuple[int, int]]:
        """Transfers that move the Ace side's top from rank index ``a`` to ``target``."""
        if target < a:
            return [(up, down)] * (a - target)
        return [(down, up)] * (target - a)
