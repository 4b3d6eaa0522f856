"""Corners for the search (rules.md §4), every card known (stock order included)."""

from __future__ import annotations

from collections.abc import Hashable

from app.engine import Ruleset
from app.solver.position import Child, Layout, Piles

_MAX_REDEALS = 2
_SUIT = tuple(c // 13 for c in range(52))
_RANK = tuple(c % 13 for c in range(52))
_NEXT = tuple(c - c % 13 + (c % 13 + 1) % 13 for c in range(52))  # the card after, in suit


class CornersModel(Layout):
    """Foundations f1…f4 (``self.f``) hold ♣ ♦ ♥ ♠ in that order."""

    # No limited-discrepancy search first (see search.solve_piles): with the last-pass rules
    # the plain depth-first search with the whole budget decides more deals (1..200, 200,000
    # positions: 154 won, 25 lost against 149 and 24 with half the budget spent on it first).
    lds = False
    # ``stranded_next_pass`` runs where the stock holds a multiple of this many cards: a line
    # passes such a position every few cards, so a dead end is still cut soon, and the rule
    # costs about as much as entering a position. Deals 1..20 and the 21 deals undecided
    # before the rule, 200,000 positions: every 1: 1,263,712 positions entered in 17.1 s;
    # 2: 1,388,997 in 14.1 s; 3: 1,546,037 in 14.1 s; 4: 1,717,494 in 14.8 s (all decided).
    next_pass_stride = 3

    def __init__(self, rules: Ruleset) -> None:
        super().__init__(rules)
        self._fs = self.span(self.f)  # the foundations, side by side
        self._rs = self.span(self.r)  # the reserves, side by side

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # Reserves are interchangeable: only which cards they hold matters (at a redeal the
        # vacant ones are refilled in order, but which vacant one gets which card changes
        # nothing later).
        return (
            redeals,
            tuple(map(len, piles[self._fs])),
            tuple(sorted(piles[self._rs])),
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
            return (
                redeals == _MAX_REDEALS - 1
                and len(piles[self.stock]) % self.next_pass_stride == 0
                and self.stranded_next_pass(piles)
            )
        waste = piles[self.waste]
        if len(waste) >= 2:
            tops = [piles[f][-1] % 13 for f in self.f]
            highest = [-1, -1, -1, -1]  # per suit: the latest-needed card seen above so far
            for c in reversed(waste):
                s = c // 13
                d = (c % 13 - tops[s]) % 13
                if d < highest[s]:
                    return True
                highest[s] = d
        # With the stock empty the test above is exact: if no pair is buried, the next card
        # of the waste top's suit is that top or in a reserve (below it, it would make a
        # buried pair), so some card can go home until all are.
        return bool(piles[self.stock]) and self.stranded(piles)

    def stranded(self, piles: Piles) -> bool:
        """**Stranded in the last pass** (no redeal left, the stock not empty).

        In the last pass a card that leaves the stock either lands on the waste, from where
        it can only go home as the waste's top, or is *pulled*: taken into a reserve when a
        reserve card goes home while it is the stock's top (C3). A card X landing on the
        waste while a card of its suit needed before X is still in the waste buries that
        card for good (the rule above). This walks the stock in the order it is dealt and,
        before each card X leaves it, bounds what can have happened with a relaxed game
        in which reserve cards and every card dealt so far may go home at any time (in
        their suit's order) and waste cards only from the top. It finds cards that a won
        line must have pulled and that cannot be home yet — X itself, if a card of its suit
        needed before it is still in the relaxed waste (until X can be home); and one of the
        two, for disjoint pairs of dealt cards Y (dealt before X, its suit, needed before it)
        and X where Y cannot be home yet (until Y can be home) — and says lost when they
        outnumber the reserve cards of the position that can have gone home by then, or when
        a waste card is still stuck once the stock is dealt.

        *Proof.* The relaxed game allows every move of the real one (a real waste top going
        home is also the relaxed waste's top: the relaxed waste holds the waste's cards not
        yet home there, in their order), and a card going home never hurts in it, so
        playing all it can (the loop below) reaches every card the real game can have home
        before X leaves the stock (cards still in the stock below X cannot move before X does:
        only the stock's top is dealt or pulled). A waste card still in the relaxed waste is
        still in the real waste. If X lands while such a card of its suit, needed before it,
        lies there, that card is buried (C1, C2); so X is pulled. Likewise a dealt card Y
        that the relaxed game cannot have home is, unless it was pulled, in the waste below
        X: Y or X is pulled, and neither is home while Y is not. Disjoint pairs give distinct
        cards. A pulled card not yet home sits in a reserve. With no redeal left nothing
        refills a vacant reserve but a pull, which happens as a reserve card goes home: so
        the reserves that hold pulled cards at any time are at most those whose card of the
        position has gone home (each reserve holds its card of the position, then pulled
        cards one after another) — at most the reserve cards the relaxed game has home by
        then. Once the stock is dealt, a waste card the relaxed game cannot send home never
        goes home.
        """
        kind = bytearray(52)  # 1: a reserve card of the position
        for r in self.r:
            for c in piles[r]:
                kind[c] = 1
        nxt = [_NEXT[piles[f][-1]] for f in self.f]
        room = [13 - len(piles[f]) for f in self.f]
        waste = list(piles[self.waste])
        return _short_of_room(kind, nxt, room, waste, piles[self.stock][::-1], 0, [0, 1, 2, 3])

    def stranded_next_pass(self, piles: Piles) -> bool:
        """**Stranded in the next pass** (exactly one redeal left).

        The last pass deals what is then left of this pass's waste W first, bottom card
        first, and after it what stays of the stock S. This bounds the rest of this pass with
        the relaxed game of ``stranded`` in which every card of S, like every reserve card,
        may go home at any time, and W's cards only from its top; then it walks the cards of
        W that game cannot send home, in the order the last pass deals them, finding the
        pulled cards a won line must hold exactly as ``stranded`` does, and says lost when
        they outnumber the reserves vacant now and the reserve cards of the position that can
        have gone home by then.

        *Proof.* A card of W never leaves the waste in this pass except to its foundation as
        the waste's top (only the stock's top is ever pulled, C3), so the relaxed game, which
        allows every move of the real one, has every card home the real one can have, in
        this pass and, dealing W's cards one by one, in the last. At the redeal (C4) the cards
        of W still in the waste are the new stock's first cards, in their order; the last
        pass then deals them, or takes them into reserves: at the redeal (vacant reserves are
        filled in order) or pulled. For two such cards Y before X of one suit, Y needed
        first: if Y is not home when X leaves the stock, Y lies in the waste below X or was
        taken into a reserve, and with no redeal after, a waste card under one of its suit
        needed later is buried for good (``dead``); so Y or X sits in a reserve until Y is
        home. The reserves that can hold such cards are those vacant now and those whose
        card of the position has gone home: the others still hold that card (a reserve holds
        its card of the position, then cards pulled from S or taken from W).
        """
        kind = bytearray(52)  # 1: a reserve card of the position; 2: a card of S
        slots = 0  # reserves that may hold cards of W in the last pass
        for r in self.r:
            p = piles[r]
            if p:
                kind[p[0]] = 1
            else:
                slots += 1
        for c in piles[self.stock]:
            kind[c] = 2
        left = list(piles[self.waste])
        nxt = [_NEXT[piles[f][-1]] for f in self.f]  # each suit's next card
        room = [13 - len(piles[f]) for f in self.f]  # cards each suit still takes
        # The relaxed game in this pass: the waste W goes home only from its top.
        slots += _play_home([0, 1, 2, 3], kind, left, nxt, room)
        if len(left) < 2 * slots + 2:
            return False  # too few cards left for more pairs than reserves
        # The last pass deals what is left of W, bottom card first.
        return _short_of_room(kind, nxt, room, [], tuple(left), slots, [])

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, redeals, safe=True)

    def all_children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, redeals, safe=False)

    def _children(self, piles: Piles, redeals: int, *, safe: bool) -> list[Child]:
        """Foundation moves from the waste, then from the reserves, then dealing, then
        redealing. Apart from the safe moves below no move is forced: playing a reserve card
        takes the stock's top into that reserve, and a redeal fills vacant reserves from the
        turned waste, so even a foundation move can change which cards end up where.

        **Safe moves in the last pass.** With no redeal left, the waste's top card going to its
        foundation, and — once the stock is empty — a reserve card going to its foundation,
        is played alone, as the only child.

        *Proof.* Let X be that card, P the position, L any winning line from P. Build L' that
        plays X home first and then follows L, skipping the one move of L that plays X home.
        Invariant until L plays X: L' is L with X home, every other card in the same place.
        No card of X's suit can go home in L before X (a foundation takes its suit in one
        order, C1, and X is next). Dealing moves the same stock top in both. A reserve card
        played home refills from the same stock top in both (C3) — and a reserve that held X
        gets no refill in either, as the stock is empty in that case. A waste card played home
        in L is the waste's top there; X is either that card (the skipped move) or lies below
        it, so L''s waste top is the same card. No redeal is left (C4), so nothing else
        reorders the stock, the waste or the reserves. After L plays X both positions are
        equal, so L' wins too.

        **And one pass before, once the stock is empty:** with exactly one redeal left and an
        empty stock, the waste's top card going to its foundation is played alone too.

        *Proof.* With the stock empty nothing is dealt, so until L plays X or redeals, X stays
        the waste's top and every move of L is a play home that L' can make too (reserves are
        not refilled: the stock is empty). If L plays X first, the positions meet. If L
        redeals, X, the waste's top, becomes the new stock's bottom; vacant reserves are filled
        from the top (C4), so L' fills the same reserves with the same cards, except that if
        the fill reaches X, the reserve that takes X in L stays vacant in L'. From there the
        invariant is "L' is L without X", X lying at the stock's bottom or in a reserve in L:
        dealing and refilling take the same cards until L reaches X; then L deals X (skipped),
        refills a reserve with it (the reserve stays vacant in L': the stock is empty), or
        plays it home (skipped). No further redeal is allowed (C4), so a vacant reserve never
        matters again, and L' wins. (With two redeals left this fails: a reserve that holds X
        in L but is vacant in L' is filled at the second redeal, and the lines part.)
        """
        last = redeals >= _MAX_REDEALS
        # The stock empty with one redeal left: the waste's top is forced too (see above).
        before_last = redeals == _MAX_REDEALS - 1 and not piles[self.stock]
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
                child: Child = ((src, f, 1), tuple(new), redeals)
                if safe and (
                    (last and (src == self.waste or not stock))
                    or (before_last and src == self.waste)
                ):
                    return [child]
                out.append(child)
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


def _play_home(
    todo: list[int], kind: bytearray, left: list[int], nxt: list[int], room: list[int]
) -> int:
    """The relaxed game plays home all it can, for the suits in ``todo`` and those a new
    waste top belongs to: a suit's next card (``nxt``, while ``room`` says the suit takes
    more) goes home if it may at any time (``kind``) or is the top of ``left``, a waste that
    gives up only its top. Returns how many reserve cards of the position (kind 1) went."""
    freed = 0
    while todo:
        s = todo.pop()
        c, n = nxt[s], room[s]
        while n:
            k = kind[c]
            if k:
                freed += k == 1
            elif left and left[-1] == c:
                left.pop()
                if left:  # the new waste top may go home next
                    todo.append(_SUIT[left[-1]])
            else:
                break
            n -= 1
            c = _NEXT[c]
        nxt[s], room[s] = c, n
    return freed


def _short_of_room(
    kind: bytearray,
    nxt: list[int],
    room: list[int],
    left: list[int],
    walk: tuple[int, ...],
    slots: int,
    todo: list[int],
) -> bool:
    """The walk of ``stranded`` and ``stranded_next_pass``: the cards of ``walk`` leave the
    stock in that order, onto the waste ``left`` (which gives up only its top), and before
    each one the relaxed game plays home all it can (first for the suits in ``todo``). True
    when a won line would need more pulled cards in reserves at one time than ``slots`` plus
    the reserve cards of the position gone home, or when a waste card is stuck once the
    stock is dealt."""
    start = [_RANK[c] for c in nxt]  # distances count from each suit's next card (0: next)
    before = room[:]  # gone home since the start, per suit: before[s] - room[s]
    # Per suit, the earliest-needed card of each waste prefix (13: none).
    first = [13, 13, 13, 13]
    earliest: list[tuple[int, ...]] = []
    for c in left:
        s = _SUIT[c]
        d = (_RANK[c] - start[s]) % 13
        if d < first[s]:
            first[s] = d
        earliest.append(tuple(first))
    waiting: list[list[int]] = [[], [], [], []]  # dealt cards not yet paired
    # Per suit, for each pulled card found: the distance of a card that is not home while the
    # pulled card must sit in a reserve (the pulled card itself, or the Y of its pair).
    held: list[list[int]] = [[], [], [], []]
    holding = 0  # at least the cards in ``held`` still out (those home are dropped lazily)
    for x in (*walk, -1):  # -1: the stock is dealt out
        if todo:
            slots += _play_home(todo, kind, left, nxt, room)
        if x < 0:
            break
        s = _SUIT[x]
        d = (_RANK[x] - start[s]) % 13
        g = before[s] - room[s]
        if left and earliest[len(left) - 1][s] < d:
            held[s].append(d)  # X itself is pulled
            holding += 1
        else:
            pending = waiting[s]
            best = 13  # the earliest-needed Y not home and needed before X, if any: the
            for e in pending:  # first to stop qualifying as cards go home
                if g <= e < best and e < d:
                    best = e
            if best < 13:
                pending.remove(best)
                held[s].append(best)
                holding += 1
            else:
                pending.append(d)
        if holding > slots:
            holding = 0
            for t, h in enumerate(held):  # drop the pulled cards free to go home by now
                gone = before[t] - room[t]
                held[t] = [e for e in h if e >= gone]
                holding += len(held[t])
            if holding > slots:
                return True
        kind[x] = 2
        if d == g:
            todo.append(s)
    return bool(left)
