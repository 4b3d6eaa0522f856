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
    # Whether ``children`` plays a safe foundation move alone (see ``_children``). Off for the
    # service's model: its hints' visible search (hints._visible) walks these children, and
    # with the safe moves on, hint-led deal 1 put 60 cards home instead of 67 (deals 2..10
    # unchanged; bench/RESULTS.md, 2026-11-27, Quadruple Interchange's ceiling). On in
    # ``ForcingModel``, for the layered search.
    safe_moves = False

    # ``progress``'s weights (higher: nearer a win), for the layered search: per card home,
    # per face-down card, per empty tableau pile, per tableau card that does not lie in suit
    # on the card below it, per card that lies above a lower card of its suit in the same pile
    # (it must move before that card can go home), per waste card. Deals 1..5 at 50,000
    # positions (bench/qi_ceiling.py, bench/RESULTS.md): most cards home 79, 34, 36, 40, 47
    # with these, 69, 30, 33, 35, 51 at 100,000 with 10, 6, 4, 2, 2, 1.
    w_home, w_down, w_empty, w_break, w_buried, w_waste = 10, 10, 10, 1, 1, 2

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

    def progress(self, piles: Piles) -> int:
        """How near a win a position looks (higher: nearer), from every card (face-down ones
        included: the search knows them), for the layered search (``searches.layered``). Only
        the order of a search depends on it, never its answer. (Not named ``score``: the
        portfolio would then run a best-first search on it instead of the discrepancy search.)"""
        home = 0
        for f in self.f:
            home += len(piles[f])
        down = empty = breaks = buried = 0
        for t in self.t:
            p = piles[t]
            if not p:
                empty += 1
                continue
            low = [13, 13, 13, 13]  # per suit, the lowest rank below in this pile
            prev = -1  # the face-up card below (-1: none)
            for card in p:
                if card < 0:
                    down += 1
                    breaks += 1
                    face, prev = ~card, -1
                else:
                    if prev < 0 or card != prev - 1 or prev % 13 == 0:
                        breaks += 1
                    face = prev = card
                s, r = divmod(face, 13)
                if low[s] < r:
                    buried += 1
                else:
                    low[s] = r
        return (
            self.w_home * home
            - self.w_down * down
            + self.w_empty * empty
            - self.w_break * breaks
            - self.w_buried * buried
            - self.w_waste * len(piles[self.waste])
        )

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, safe=self.safe_moves)

    def all_children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, safe=False)

    def _children(self, piles: Piles, *, safe: bool) -> list[Child]:
        """Foundation moves, then moves that turn a card up or empty a pile, then other
        tableau moves, then dealing. Runs go to the first empty pile only, and never a whole
        pile into an empty one.

        **Safe moves** (with ``safe``): a card that can go to a foundation is played alone, as
        the only child, when it is an Ace or a 2, or when all four copies of the card below it
        in suit are home. Proof: nothing ever needs to go on such a card in the tableau (an
        Ace can always go home: the sixteen foundations hold one Ace each, so one is empty
        while an Ace is out; all copies of the card below are home otherwise), so in any win
        it only waits to go home, and playing it now takes nothing away: it only uncovers the
        card or pile below it sooner (a face-down card turns up, an empty pile takes
        anything), and the foundation it goes on takes nothing else of that rank meanwhile
        (foundations of a suit that show the same card are interchangeable)."""
        stock, waste = piles[self.stock], piles[self.waste]
        need: dict[int, int] = {}
        empty_f = -1
        # Per face, how many of its four copies are home.
        homes = [0] * 52 if safe else []
        for f in self.f:
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
            else:
                top = p[-1]
                if safe:
                    for c in range(top - top % 13, top + 1):
                        homes[c] += 1
                if top % 13 != 12:
                    need.setdefault(top + 1, f)
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

        def is_safe(c: int) -> bool:
            return c % 13 <= 1 or homes[c - 1] == 4

        if waste:
            c = waste[-1]
            f = home_for(c)
            if safe and f >= 0 and is_safe(c):
                new = list(piles)
                new[self.waste] = waste[:-1]
                new[f] = (*piles[f], c)
                return [((self.waste, f, 1), tuple(new), 0)]
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
                        if safe and is_safe(bottom):
                            return [child]
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


class ForcingModel(QuadrupleInterchangeModel):
    """The model with its safe foundation moves forced: a proven safe move is a position's only
    child. For the layered search (``searches.layered``; bench/qi_ceiling.py)."""

    safe_moves = True
