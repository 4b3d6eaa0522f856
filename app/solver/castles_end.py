"""Castle's End for the search (rules.md §5): every card is face up, so the search is exact.

Positions are ``State.piles``-shaped, foundations ``f1…f4`` (indices 0–3) and tableau
``t1…t10`` (4–13), but each pile is a ``bytes`` object (card faces 0–51) rather than a tuple:
``encode`` turns engine piles into that form, and every method accepts either. Bytes slice,
join, compare and hash in C and cache their hash, so the transposition key (the base rank and
the sorted tableau, joined into one ``bytes``) costs a few C calls a position.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import cast

from app.solver.position import Child, Layout, Mv, Piles

_NO_BASE = 255  # the key's first byte before the base is chosen (E1)
_ONE = tuple(bytes((c,)) for c in range(256))
# Same-suit rank neighbours (E3: no wrap), -1 where there is none.
_ABOVE = tuple(c + 1 if c % 13 != 12 else -1 for c in range(52))
_BELOW = tuple(c - 1 if c % 13 != 0 else -1 for c in range(52))
# The card a foundation whose top is ``c`` takes next (E2: wrap).
_NEXT = tuple(c - 12 if c % 13 == 12 else c + 1 for c in range(52))
_SEP = b"\xff"


def encode(piles: Sequence[Sequence[int]]) -> tuple[bytes, ...]:
    """Engine piles (tuples of card faces) as the model's piles (``bytes``); idempotent."""
    return tuple(p if type(p) is bytes else bytes(p) for p in piles)


# The model's piles are ``tuple[bytes, ...]`` at run time, typed as ``Piles`` for the search.
_pack: Callable[[list[bytes]], Piles] = tuple  # type: ignore[assignment]


def _bytes(piles: Sequence[Sequence[int]]) -> tuple[bytes, ...]:
    return cast("tuple[bytes, ...]", piles) if type(piles[4]) is bytes else encode(piles)


class CastlesEndModel(Layout):
    dead_ends = False  # no dead-end rule: the search need not ask

    def encode(self, piles: Piles) -> Piles:
        return cast(Piles, encode(piles))

    def base(self, piles: Sequence[Sequence[int]]) -> int:
        for f in self.f:
            if piles[f]:
                return piles[f][0] % 13
        return -1

    def won(self, piles: Piles) -> bool:
        return not any(piles[4:])

    def key(self, piles: Piles, redeals: int) -> Hashable:
        # Which foundation holds which suit, and which tableau pile is where, change nothing:
        # every card's place is known from the tableau once the base rank is.
        ps = _bytes(piles)
        base = self.base(ps)
        return _ONE[base if base >= 0 else _NO_BASE] + _SEP.join(sorted(ps[4:]))

    # Weights of ``score``, chosen by hand. Deals 1..200 hardly depend on them (173k–177k
    # positions in all for the variants tried: the lost deals, searched whole, dominate).
    w_home, w_depth, w_empty = 8, 2, 3

    def score(self, given: Piles) -> int:
        """How near a win a position looks, for the best-first search (higher: nearer): cards
        home, minus how deep the next card of each suit lies in its pile, plus empty piles.
        Only the order of the search depends on it, never its answer."""
        piles = _bytes(given)
        home = len(piles[0]) + len(piles[1]) + len(piles[2]) + len(piles[3])
        if not home:
            return 0
        base = piles[0][0] % 13 if piles[0] else self.base(piles)
        needed = []
        suits = [True, True, True, True]
        for f in (0, 1, 2, 3):
            p = piles[f]
            if p:
                suits[p[0] // 13] = False
                if len(p) < 13:
                    needed.append(_NEXT[p[-1]])
        needed += [s * 13 + base for s in (0, 1, 2, 3) if suits[s]]
        tableau = piles[4:]
        whole = _SEP.join(tableau)  # one scan per card below, in C
        end = len(whole)
        depth = 0
        for c in needed:
            i = whole.find(c)
            if i >= 0:
                j = whole.find(255, i)
                depth += (end if j < 0 else j) - i - 1
        empty = tableau.count(b"")
        return self.w_home * home - self.w_depth * depth + self.w_empty * empty

    def dead(self, piles: Piles, redeals: int) -> bool:
        return False

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, safe=True)

    def all_children(self, piles: Piles, redeals: int) -> list[Child]:
        return self._children(piles, safe=False)

    def _children(self, given: Piles, *, safe: bool) -> list[Child]:
        """Moves best first; a proven safe foundation move alone when there is one.

        **Safe move.** Once the base is chosen, a card X that may go to its foundation is
        played at once, as the only child, unless X is a base-rank card other than an Ace
        (its rank neighbour below is then its suit's *last* foundation card).

        *Proof.* Write "next" for foundation order. X's rank neighbour below (if any) is home;
        only X's neighbour above could ever be put on X. Take any winning line L from the
        position and build L' which starts by playing X home. Keep this invariant between a
        position of L and one of L': L' is L with a set H of cards moved home, H being the
        next cards of X's suit after L's foundation top, in order (at first H = {X}); every
        other card lies where it lies in L. Follow L move by move:

        - a card of H moves in the tableau: skip it (it is home in L');
        - a card of H goes home in L: skip it, and it leaves H (H stays the next run);
        - a card Y not in H goes home in L: then H is empty (Y would be the first of H), so
          Y may go home in L' too;
        - a card Y not in H moves onto a tableau card T: Y is the top of its pile in L', as
          in L. If T is not in H, T is the top of its pile in L' too, and the move is legal.
          If T is in H, Y is a rank neighbour of T; the one below is home in L or in H (no
          card of H is the base), so Y is T's neighbour above: if T is the last card of H,
          Y goes home in L' and joins H; otherwise Y is in H — not the case;
        - a card Y not in H goes to an empty pile: that pile is empty in L' too.

        Every card is home at the end of L, hence at the end of L'. So playing X never turns
        a winnable position into a lost one. (Castle's End has one deck, builds only by one
        rank in suit and never moves a card off a foundation; all three are used.)

        Pointless moves are not generated: a pile's only card going to an empty pile, and to
        empty piles other than the first (piles are interchangeable: see ``key``).
        """
        piles = _bytes(given)
        base = -1
        for f in (0, 1, 2, 3):
            p = piles[f]
            if p:
                base = p[0] % 13
                break
        if base < 0:
            # E1: the first card to a foundation chooses the base (f1, the first empty one).
            out: list[Child] = []
            for t in range(4, 14):
                src = piles[t]
                if src:
                    new = list(piles)
                    new[t] = src[:-1]
                    new[0] = src[-1:]
                    out.append(((t, 0, 1), _pack(new), 0))
            return out
        need: dict[int, int] = {}  # card face → foundation it may go on
        empty_f = -1
        for f in (0, 1, 2, 3):
            p = piles[f]
            if not p:
                if empty_f < 0:
                    empty_f = f
            elif len(p) < 13:
                need[_NEXT[p[-1]]] = f
        foundation: list[Child] = []
        by_card: dict[int, int] = {}  # top card → its pile
        empty_t = -1
        for t in range(4, 14):
            src = piles[t]
            if not src:
                if empty_t < 0:
                    empty_t = t
                continue
            c = src[-1]
            by_card[c] = t
            f = need.get(c, -1)
            if f < 0:
                if c % 13 != base or empty_f < 0:
                    continue
                f = empty_f
            new = list(piles)
            new[t] = src[:-1]
            new[f] = piles[f] + _ONE[c]
            child: Child = ((t, f, 1), _pack(new), 0)
            if safe and (c % 13 != base or base == 0):
                return [child]
            foundation.append(child)
        # Tableau moves: onto a same-suit neighbour, or into the first empty pile.
        uncover: list[Child] = []
        other: list[Child] = []
        for c, t in by_card.items():
            src = piles[t]
            rest = src[:-1]
            targets = []
            d = by_card.get(_ABOVE[c], -1)
            if d >= 0:
                targets.append(d)
            d = by_card.get(_BELOW[c], -1)
            if d >= 0:
                targets.append(d)
            if empty_t >= 0 and rest:
                targets.append(empty_t)
            if not targets:
                continue
            # Moves that empty a pile or uncover a card that can go home come first.
            first = not rest or rest[-1] in need
            for d in targets:
                new = list(piles)
                new[t] = rest
                new[d] = piles[d] + _ONE[c]
                mv: Mv = (t, d, 1)
                (uncover if first else other).append((mv, _pack(new), 0))
        return foundation + uncover + other
