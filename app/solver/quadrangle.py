"""Quadrangle for the search (rules.md §2), every card known (stock order included).

As for Castle's End, each pile is a ``bytes`` object (card faces 0–51; the two decks' equal
cards are one face) rather than a tuple: ``encode`` turns engine piles into that form, every
method accepts either, and the transposition key is one ``bytes`` object (hashed once, in C).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import cast

from app.engine import Ruleset
from app.solver.position import Child, Layout, Piles

_ONE = tuple(bytes((c,)) for c in range(256))
_SEP = b"\xff"
_NONE = 255  # an empty foundation's "top" in the key
# Rank neighbours in suit with wrap (Q1, Q2): the next card up, and the card that goes on c.
_NEXT = tuple(c - 12 if c % 13 == 12 else c + 1 for c in range(52))
_PRED = tuple(c + 12 if c % 13 == 0 else c - 1 for c in range(52))
# The model's piles are ``tuple[bytes, ...]`` at run time, typed as ``Piles`` for the search.
_pack: Callable[[list[bytes]], Piles] = tuple  # type: ignore[assignment]


def encode(piles: Sequence[Sequence[int]]) -> tuple[bytes, ...]:
    """Engine piles (tuples of card faces) as the model's piles (``bytes``); idempotent."""
    return tuple(p if type(p) is bytes else bytes(p) for p in piles)


class QuadrangleModel(Layout):
    # The search is best-first (after the portfolio's short depth-first search, see
    # search.solve_piles), three times in turn on ``scores``: cards home × 8 less the cards on
    # the waste × 1, × 8, then × 16, each with a third of the positions left. Issue #22, deals
    # 1..80 at 40,000 positions: best-first on one score (waste × 1) won 35, where the
    # limited-discrepancy search then depth-first search won 25. Deals 1..40 at 40,000: the
    # waste × 1 won 18, × 8 won 18, × 16 won 12, but not the same deals (28 of 40 between
    # them): a best-first search spends its budget where its score leads it, on a deal's
    # endgame with the stock dealt out, and another weight of the waste leads elsewhere. At
    # 200,000 positions, deals 1..200: 120 won (60.0%) against 85 on the waste × 1 alone
    # (bench/RESULTS.md, 2026-11-27); a fourth score, penalising waste cards above a card of
    # their suit nearer the base, won no deal more of 1..40.
    w_home = 8
    w_wastes = (1, 8, 16)

    def encode(self, piles: Piles) -> Piles:
        return cast(Piles, encode(piles))

    def __init__(self, rules: Ruleset) -> None:
        super().__init__(rules)
        # The foundations and the tableau piles each lie side by side in the engine's order:
        # the key takes them as two slices.
        self._fs = self.span(self.f)
        self._ts = self.span(self.t)
        self.scores = tuple(self._weighed(w) for w in self.w_wastes)

    def key(self, given: Piles, redeals: int) -> Hashable:
        # The stock only ever loses its top card (one pass), so its length says what it holds.
        # Foundations and tableau piles are interchangeable among themselves. A foundation
        # holds its suit from the base rank up to its top card (Q1), so its top card says what
        # it holds (-1: empty): sorting eight numbers is cheaper than sorting eight piles.
        # As bytes: eight foundation tops, the twelve tableau piles sorted, each followed by
        # a separator, then the waste, then the stock's length (the waste's end is implied).
        piles: tuple[bytes, ...] = given if type(given[0]) is bytes else encode(given)  # type: ignore[comparison-overlap]
        tops = bytes(sorted([p[-1] if p else _NONE for p in piles[self._fs]]))
        return b"".join(
            (
                tops,
                _SEP.join(sorted(piles[self._ts])),
                _SEP,
                piles[self.waste],
                _ONE[len(piles[self.stock])],
            )
        )

    def score(self, piles: Piles) -> int:
        """How near a win a position looks, for the best-first search (higher: nearer): cards
        home, less the cards on the waste (a card dealt onto the waste buries the one below
        it, and no redeal brings it back). Only the order of the search depends on it, never
        its answer. The first of ``scores``."""
        return self._score(piles, self.w_wastes[0])

    def _score(self, piles: Piles, w_waste: int) -> int:
        home = sum(map(len, piles[self._fs]))
        return self.w_home * home - w_waste * len(piles[self.waste])

    def _weighed(self, w_waste: int) -> Callable[[Piles], int]:
        """``_score`` with the waste weighed ``w_waste``, as one closure (it runs for every
        position generated)."""
        fs, waste, w_home = self._fs, self.waste, self.w_home

        def score(piles: Piles) -> int:
            return w_home * sum(map(len, piles[fs])) - w_waste * len(piles[waste])

        return score

    def won(self, piles: Piles) -> bool:
        # Cards leave the stock long before the end: while it holds any, nothing else needs a
        # look (this runs for every position generated).
        return not piles[self.stock] and not piles[self.waste] and super().won(piles)

    def dead(self, piles: Piles, redeals: int) -> bool:
        return False

    def children(self, given: Piles, redeals: int) -> list[Child]:
        return self._children(given, safe=True)

    def all_children(self, given: Piles, redeals: int) -> list[Child]:
        return self._children(given, safe=False)

    def _children(self, given: Piles, *, safe: bool) -> list[Child]:
        """Foundation moves, then tableau building, then dealing.

        Pointless moves are not generated: into empty piles other than the first (they are
        interchangeable), and a pile's only card into an empty pile when nothing refills it.

        **Safe moves** (with ``safe``): a tableau pile's top card X that can go to its
        foundation is played alone, as the only child, when
        (a) both copies of the card below it in suit, pred(X), are on foundations,
        (b) X is not its pile's only card, or the waste and the stock are empty, and
        (c) no tableau pile is empty while the waste or the stock holds a card.
        Why no win is lost: on the tableau X can only ever take pred(X) (Q2), and both are home
        for good, so X is of no use there. Take any winning line L from the position, and play
        it from the position after X went home, skipping L's moves of X. Every other move of L
        stays legal: the one pile X lies on in L (it only ever lies on a pile's top, nothing
        can cover it) is that pile without X, and a move of L onto X cannot exist; by (b) X's
        leaving its pile refills nothing, and by (c), which every move keeps (an emptied pile
        is refilled at once while the waste or the stock holds a card), a pile X leaves in L is
        never emptied with a refill to come. Both foundations of X's suit hold pred(X) (a
        foundation holds one card of each rank), so while L has not played X home, the only
        card either can take in L is the other copy of X: it goes on whichever of the two
        still shows pred(X) (foundations are alike, Q1). Once L plays X home the two positions
        are equal up to which foundation is which, so the line still wins. Off by default in
        ``all_children``, which line checks and shortening use (every legal move).
        (A waste card is not played this way: in L a refill may take X from the waste where
        the shorter line's refill would take the card under it.)"""
        # The hot loop of the search: lookups by card face are list indexing (faster than
        # dict methods), and each child is one tuple made from a list changed in place.
        piles: tuple[bytes, ...] = given if type(given[0]) is bytes else encode(given)  # type: ignore[comparison-overlap]
        waste_i, stock_i = self.waste, self.stock
        stock, waste = piles[stock_i], piles[waste_i]
        base = piles[self.f[0]][0] % 13
        need = [-1] * 52  # card face → the foundation it goes on next (the first such)
        held = [0, 0, 0, 0]  # each suit's cards on its two foundations, fewer of the two
        seen = [0, 0, 0, 0]  # each suit's foundations started so far
        empty_f = -1
        for f in self.f:
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
                continue
            s = p[0] // 13
            held[s] = len(p) if not seen[s] or len(p) < held[s] else held[s]
            seen[s] += 1
            if len(p) < 13:
                n = _NEXT[p[-1]]
                if need[n] < 0:
                    need[n] = f
        fits: list[list[int] | None] = [None] * 52  # card face → tableau piles it may go on
        empty_t = -1
        sources: list[int] = []
        for t in self.t:
            p = piles[t]
            if p:
                sources.append(t)
                below = _PRED[p[-1]]
                on = fits[below]
                if on is None:
                    fits[below] = [t]
                else:
                    on.append(t)
            elif empty_t < 0:
                empty_t = t
        refills = bool(waste or stock)
        if safe and (empty_t < 0 or not refills):  # (c)
            for src in sources:
                p = piles[src]
                c = p[-1]
                f = need[c]
                if f < 0:
                    continue
                # (a): both foundations of the suit hold pred(c), that is, each holds at
                # least (c's distance from the base rank) cards; a base-rank card never
                # qualifies (pred is the last card of a foundation). (b): len(p) > 1.
                d = (c % 13 - base) % 13
                s = c // 13
                if d and seen[s] == 2 and held[s] >= d and (len(p) > 1 or not refills):
                    after = list(piles)
                    after[src] = p[:-1]
                    after[f] = piles[f] + _ONE[c]
                    return [((src, f, 1), _pack(after), 0)]
        if waste:
            sources.append(waste_i)
        home: list[Child] = []
        build: list[Child] = []
        for src in sources:
            p = piles[src]
            c = p[-1]
            f = need[c]
            if f < 0 and empty_f >= 0 and c % 13 == base:
                f = empty_f
            targets = fits[c]  # never ``src`` itself: its top is c, not succ(c)
            # A pile's only card into an empty pile is pointless unless emptying the pile
            # brings a refill (Q4). In play an empty pile means the waste and the stock are
            # empty too, but a position built by hand may have both.
            to_empty = empty_t >= 0 and src != waste_i and (len(p) > 1 or refills)
            if f < 0 and targets is None and not to_empty:
                continue
            after = list(piles)
            rest = p[:-1]
            if not rest and src != waste_i:  # Q4: refill from the waste, else the stock
                if waste:
                    rest = waste[-1:]
                    after[waste_i] = waste[:-1]
                elif stock:
                    rest = stock[-1:]
                    after[stock_i] = stock[:-1]
            after[src] = rest
            card = _ONE[c]
            if f >= 0:
                after[f] = piles[f] + card
                home.append(((src, f, 1), _pack(after), 0))
                after[f] = piles[f]
            dsts = targets or []
            if to_empty:
                dsts = [*dsts, empty_t]
            for dst in dsts:
                after[dst] = piles[dst] + card
                build.append(((src, dst, 1), _pack(after), 0))
                after[dst] = piles[dst]
        out = home + build
        if stock:
            new = list(piles)
            new[stock_i] = stock[:-1]
            new[waste_i] = waste + stock[-1:]
            out.append(((self.stock, self.waste, 1), _pack(new), 0))
        return out
