"""Small constructed positions for checking the solver against exhaustive search.

Each strategy builds a position of one game near its end: foundations partly built, and the
few cards still to go (exactly the ones that continue the foundations) spread at random over
the other piles. "Won" for such a position means every non-foundation pile is empty.
"""

from __future__ import annotations

from hypothesis import strategies as st

from app.engine import Move, Ruleset, State, get_ruleset


def rest_empty(rules: Ruleset, state: State) -> bool:
    return not any(p for i, p in enumerate(state.piles) if i not in rules.foundations)


def replays_to_a_win(state: State, moves: tuple[Move, ...]) -> bool:
    rules = get_ruleset(state.game)
    return rest_empty(rules, rules.replay(state, moves))


def exhaustive(state: State, limit: int = 20_000) -> bool | None:
    """Whether a position with every non-foundation pile empty can be reached, by search over
    the engine's own ``legal_moves``/``apply``, no pruning; None when more than ``limit``
    positions would be needed. Positions are told apart exactly, except that piles of one kind
    that only trade places (tableau piles, reserves, foundations holding the same cards) count
    as one position — the rules treat every pile of a kind alike."""
    rules = get_ruleset(state.game)
    kinds = [rules.foundations, rules.tableau, rules.reserves]

    def canonical(s: State) -> object:
        return (
            s.redeals,
            tuple(tuple(sorted(s.piles[i] for i in kind)) for kind in kinds),
            tuple(p for i, p in enumerate(s.piles) if i in (rules.stock, rules.waste)),
        )

    seen = {canonical(state)}
    todo = [state]
    while todo:
        s = todo.pop()
        if rest_empty(rules, s):
            return True
        for move in rules.legal_moves(s):
            t = rules.apply(s, move)
            k = canonical(t)
            if k not in seen:
                if len(seen) >= limit:
                    return None
                seen.add(k)
                todo.append(t)
    return False


def _spread(
    draw: st.DrawFn, cards: list[int], piles: int, *, full: bool = False
) -> list[list[int]]:
    """``cards`` in random order over ``piles`` piles (with ``full``, one card to each pile
    first, as far as they go)."""
    order = list(draw(st.permutations(cards)))
    out: list[list[int]] = [[] for _ in range(piles)]
    if full:
        for pile in out:
            if order:
                pile.append(order.pop())
    for c in order:
        out[draw(st.integers(0, piles - 1))].append(c)
    return out


@st.composite
def castles_end(draw: st.DrawFn) -> State:
    """A real deal, its base chosen and a few random moves played (Castle's End's lost deals
    are lost early, so whole trees are small enough for the exhaustive search)."""
    rules = get_ruleset("castles-end")
    state = rules.deal(draw(st.integers(1, 10_000)))
    for _ in range(draw(st.integers(1, 6))):
        moves = rules.legal_moves(state)
        if not moves:
            break
        state = rules.apply(state, draw(st.sampled_from(moves)))
    return state


@st.composite
def castles_end_ending(draw: st.DrawFn) -> State:
    """Foundations partly built; the cards still to go spread over every pile."""
    rules = get_ruleset("castles-end")
    base = draw(st.integers(0, 12))  # rank index of the base card
    placed = [draw(st.integers(0, 13)) for _ in range(4)]
    placed[0] = max(placed[0], 1)  # the base has been chosen
    left = [draw(st.integers(0, 13 - n)) for n in placed]
    while sum(left) > 14:
        left[left.index(max(left))] -= 1
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    f = 0
    loose: list[int] = []
    for s in range(4):
        cards = [s * 13 + (base + d) % 13 for d in range(13)]
        if placed[s]:
            piles[rules.foundations[f]] = tuple(cards[: placed[s]])
            f += 1
        loose += cards[placed[s] : placed[s] + left[s]]
    for t, pile in zip(rules.tableau, _spread(draw, loose, draw(st.integers(1, 10)), full=True)):
        piles[t] = tuple(pile)
    return State(rules.slug, tuple(piles))


@st.composite
def corners(draw: st.DrawFn) -> State:
    rules = get_ruleset("corners")
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    loose: list[int] = []
    for s, f in enumerate(rules.foundations):
        base = draw(st.integers(0, 12))
        n = draw(st.integers(8, 13))
        cards = [s * 13 + (base + d) % 13 for d in range(13)]
        piles[f] = tuple(cards[:n])
        loose += cards[n:]
    order = draw(st.permutations(loose))
    reserves = draw(st.integers(0, min(5, len(order))))
    for r, c in zip(rules.reserves, order[:reserves]):
        piles[r] = (c,)
    split = draw(st.integers(reserves, len(order)))
    piles[rules.waste] = tuple(order[reserves:split])
    piles[rules.stock] = tuple(order[split:])
    return State(rules.slug, tuple(piles), draw(st.sampled_from([0, 1, 2, 2, 2])))


@st.composite
def corners_crowded(draw: st.DrawFn, redeals: int) -> State:
    """Corners with one to three suits far from home and the reserves (nearly) all full: the
    kind of ending Corners' pull-counting rules are about, often lost."""
    rules = get_ruleset("corners")
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    loose: list[int] = []
    busy = draw(st.sets(st.integers(0, 3), min_size=1, max_size=3))
    for s, f in enumerate(rules.foundations):
        base = draw(st.integers(0, 12))
        n = draw(st.integers(1, 8)) if s in busy else 13
        cards = [s * 13 + (base + d) % 13 for d in range(13)]
        piles[f] = tuple(cards[:n])
        loose += cards[n:]
    order = draw(st.permutations(loose))
    full = min(5, len(order))
    reserves = draw(st.integers(max(0, full - 1), full))
    for r, c in zip(rules.reserves, order[:reserves]):
        piles[r] = (c,)
    split = draw(st.integers(reserves, len(order)))
    piles[rules.waste] = tuple(order[reserves:split])
    piles[rules.stock] = tuple(order[split:])
    return State(rules.slug, tuple(piles), redeals)


@st.composite
def patriarchs(draw: st.DrawFn) -> State:
    rules = get_ruleset("patriarchs")
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    loose: list[int] = []
    for s in range(4):
        up = draw(st.integers(10, 13))  # A … up on the ascending foundation
        down = draw(st.integers(1, 4))  # K … down on the descending one
        piles[rules.foundations[s]] = tuple(s * 13 + r - 1 for r in range(1, up + 1))
        piles[rules.foundations[s + 4]] = tuple(s * 13 + r - 1 for r in range(13, down - 1, -1))
        loose += [s * 13 + r - 1 for r in range(up + 1, 14)]
        loose += [s * 13 + r - 1 for r in range(1, down)]
    order = draw(st.permutations(loose[:9]))
    reserves = draw(st.integers(0, min(9, len(order))))
    for r, c in zip(rules.reserves, order[:reserves]):
        piles[r] = (c,)
    split = draw(st.integers(reserves, len(order)))
    piles[rules.waste] = tuple(order[reserves:split])
    piles[rules.stock] = tuple(order[split:])
    return State(rules.slug, tuple(piles), draw(st.integers(0, 1)))


@st.composite
def quadrangle(draw: st.DrawFn) -> State:
    rules = get_ruleset("quadrangle")
    base = draw(st.integers(0, 12))
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    loose: list[int] = []
    for i, f in enumerate(rules.foundations):
        s = i // 2
        n = draw(st.integers(11, 13)) if i else 13
        cards = [s * 13 + (base + d) % 13 for d in range(13)]
        piles[f] = tuple(cards[:n])
        loose += cards[n:]
    order = draw(st.permutations(loose))
    tableau = draw(st.integers(0, len(order)))
    for t, pile in zip(rules.tableau, _spread(draw, order[:tableau], draw(st.integers(1, 3)))):
        piles[t] = tuple(pile)
    split = draw(st.integers(tableau, len(order)))
    piles[rules.waste] = tuple(order[tableau:split])
    piles[rules.stock] = tuple(order[split:])
    return State(rules.slug, tuple(piles))


@st.composite
def quadruple_interchange(draw: st.DrawFn) -> State:
    rules = get_ruleset("quadruple-interchange")
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    loose: list[int] = []
    for i, f in enumerate(rules.foundations):
        s = i // 4
        n = draw(st.integers(11, 13))
        piles[f] = tuple(s * 13 + r for r in range(n))
        loose += [s * 13 + r for r in range(n, 13)]
    loose = loose[:8]
    order = draw(st.permutations(loose))
    tableau = draw(st.integers(0, len(order)))
    for t, pile in zip(rules.tableau, _spread(draw, order[:tableau], 11)):
        # Any card but the top may be face down.
        piles[t] = tuple(
            ~c if i < len(pile) - 1 and draw(st.booleans()) else c for i, c in enumerate(pile)
        )
    split = draw(st.integers(tableau, len(order)))
    piles[rules.waste] = tuple(order[tableau:split])
    piles[rules.stock] = tuple(order[split:])
    return State(rules.slug, tuple(piles))


POSITIONS = {
    "castles-end": castles_end(),
    "castles-end-ending": castles_end_ending(),
    "corners": corners(),
    "patriarchs": patriarchs(),
    "quadrangle": quadrangle(),
    "quadruple-interchange": quadruple_interchange(),
}
