"""Patriarchs' search model (app/solver/patriarchs.py): its moves (transfers joined to the play
they allow), keys, prices for the priced search and its last-pass dead-end rule, checked
against the rule computed afresh and against exhaustive search of the engine's own moves."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from app.engine import Move, State, get_ruleset
from app.solver import Budget, Outcome, model_for, solve
from app.solver.lines import line_positions, to_moves
from app.solver.patriarchs import PatriarchsModel
from app.solver.search import solve_piles
from tests.engine.builders import cards, position
from tests.solver.positions import POSITIONS, exhaustive, replays_to_a_win


def test_patriarchs_slides_a_meeting_point_to_play_a_card() -> None:
    ranks = "A23456789TJQK"
    full = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
    }
    state = position(
        "patriarchs",
        full,
        f4="AS 2S 3S 4S 5S 6S",
        f8="KS QS JS TS 9S 8S 7S",
        r1="4S",
    )
    result = solve(state)
    assert result.outcome is Outcome.WINNABLE
    assert [str(m) for m in result.moves] == ["f4-f8", "f4-f8", "r1-f8"]
    assert replays_to_a_win(state, result.moves)
    # Every meeting point of a suit is one position for the search.
    model = model_for("patriarchs")
    slid = get_ruleset("patriarchs").apply(state, Move.parse("f4-f8"))
    assert model.key(slid.piles, 0) == model.key(state.piles, 0)


@st.composite
def patriarchs_last_pass(draw: st.DrawFn) -> State:
    """A Patriarchs ending in its last pass, often with the stock dealt out (its cards put on
    the waste, in the order dealing would put them there)."""
    state = draw(POSITIONS["patriarchs"])
    rules = get_ruleset("patriarchs")
    piles = list(state.piles)
    stock = piles[rules.stock]
    dealt = draw(st.integers(0, len(stock)))
    piles[rules.waste] = piles[rules.waste] + stock[len(stock) - dealt :][::-1]
    piles[rules.stock] = stock[: len(stock) - dealt]
    return State(state.game, tuple(piles), 1)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=patriarchs_last_pass())
def test_the_patriarchs_dead_end_rule_agrees_with_exhaustive_search(state: State) -> None:
    truth = exhaustive(state)
    if truth is None:
        reject()
    # The rule itself, at every last-pass position (the search checks it once the stock is
    # empty only: see PatriarchsModel.dead_stock_limit).
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_stock_limit = 1_000
    if model.dead(state.piles, state.redeals):
        assert truth is False  # the rule never calls a winnable position lost
    result = solve(state, Budget(nodes=2_000_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.moves)


def test_the_patriarchs_dead_end_rule_sees_a_card_buried_for_good() -> None:
    ranks = "A23456789TJQK"
    full = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
        "f4": "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS",  # the Ace side wants Q♠, then K♠
        "f8": "KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",  # the King side wants A♠
    }
    model = model_for("patriarchs")
    # K♠ on Q♠ in the waste, no reserve card: K♠ can never move, so Q♠ is never seen.
    stuck = position("patriarchs", redeals=1, waste="QS KS", **full)
    assert model.dead(stuck.piles, 1)
    assert exhaustive(stuck) is False
    assert solve(stuck).outcome is Outcome.LOST
    # With A♠ in a reserve, playing it takes K♠ into the reserve and uncovers Q♠: a win.
    freed = position("patriarchs", redeals=1, waste="QS KS", r1="AS", **full)
    assert not model.dead(freed.piles, 1)
    assert exhaustive(freed) is True
    assert solve(freed).outcome is Outcome.WINNABLE
    # Before the last pass the rule says nothing (a redeal may reorder the waste).
    assert not model.dead(stuck.piles, 0)


def _playable(counts: list[int], a: int, k: int) -> int:
    """At most how many of a suit's cards (``counts``: copies per rank index) can go home with
    the Ace side topped at rank index ``a`` and the King side at ``k``: the bound of the rule as
    first written (see ``PatriarchsModel.dead``)."""
    up = a + 1
    while up <= 12 and counts[up]:
        up += 1
    down = k - 1
    while down >= 0 and counts[down]:
        down -= 1
    if a < k and up >= down + 1:  # the runs meet (or the sides meet already)
        return sum(counts)
    return (up - a - 1) + (k - 1 - down)


def _dead_reference(model: PatriarchsModel, state: State) -> bool:
    """The Patriarchs last-pass rule computed afresh for every j (as ``dead`` was first
    written): the incremental version must give the same answer."""
    piles = state.piles
    counts = [[0] * 13 for _ in range(4)]
    held = 0
    for i in (*model.r, model.stock):
        for c in piles[i]:
            counts[c // 13][c % 13] += 1
            held += 1
    tops = [(piles[u][-1] % 13, piles[d][-1] % 13) for u, d in zip(model.up, model.down)]
    bound = [_playable(counts[s], *tops[s]) for s in range(4)]
    waste = piles[model.waste]
    n = len(waste)
    for j in range(1, n + 1):
        c = waste[n - j]
        counts[c // 13][c % 13] += 1
        bound[c // 13] = _playable(counts[c // 13], *tops[c // 13])
        if j < n and sum(bound) < j:
            return True
    return sum(bound) < held + n


@st.composite
def patriarchs_dealt_out(draw: st.DrawFn) -> State:
    """A real Patriarchs deal in its last pass after random plays: waste and stock long."""
    rules = get_ruleset("patriarchs")
    model = model_for("patriarchs")
    state = rules.deal(draw(st.integers(1, 10_000)))
    piles, redeals = state.piles, 0
    for _ in range(draw(st.integers(0, 250))):
        kids = model.children(piles, redeals)
        if not kids:
            break
        _, piles, redeals = draw(st.sampled_from(kids))
    return State(state.game, piles, 1)


def _dead_refined_reference(model: PatriarchsModel, state: State) -> bool:
    """The Patriarchs last-pass rule as it is now (only cards of the reserves and the waste
    count as plays, the stock's only enable them), computed afresh for every j."""
    piles = state.piles
    usable = [[0] * 13 for _ in range(4)]
    counted = [[0] * 13 for _ in range(4)]
    for c in piles[model.stock]:
        usable[c // 13][c % 13] += 1
    for r in model.r:
        for c in piles[r]:
            usable[c // 13][c % 13] += 1
            counted[c // 13][c % 13] += 1
    tops = [(piles[u][-1] % 13, piles[d][-1] % 13) for u, d in zip(model.up, model.down)]

    def bound(s: int) -> int:
        a, k = tops[s]
        up_run = list(itertools.takewhile(lambda r: usable[s][r] > 0, range(a + 1, 13)))
        down_run = list(itertools.takewhile(lambda r: usable[s][r] > 0, range(k - 1, -1, -1)))
        # The runs close the gap when the Ace side can reach one below the King side's lowest.
        if a < k and a + len(up_run) + 1 >= k - len(down_run):
            return sum(counted[s])
        return sum(1 for r in up_run + down_run if counted[s][r])

    waste = piles[model.waste]
    n = len(waste)
    for j in range(1, n):
        c = waste[n - j]
        usable[c // 13][c % 13] += 1
        counted[c // 13][c % 13] += 1
        if sum(bound(s) for s in range(4)) < j:
            return True
    return False


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=patriarchs_dealt_out())
def test_the_patriarchs_dead_end_rule_is_computed_as_written(state: State) -> None:
    """Positions reached from a deal: the incremental rule gives the answers of the rule
    computed afresh for every j, and says "lost" wherever the rule as first written did."""
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_stock_limit = 1_000  # the rule at any stock (the search skips long ones)
    dead = model.dead(state.piles, 1)
    assert dead is _dead_refined_reference(model, state)
    if _dead_reference(model, state):
        assert dead


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=patriarchs_last_pass())
def test_the_patriarchs_dead_end_rule_is_computed_as_written_on_constructed_positions(
    state: State,
) -> None:
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_stock_limit = 1_000
    assert model.dead(state.piles, 1) is _dead_refined_reference(model, state)


def test_the_patriarchs_stock_only_enables_plays() -> None:
    """A stock card played home takes no waste card off: the rule as first written counted
    the stock's cards as plays and missed this loss, the rule now does not."""
    ranks = "A23456789TJQK"
    crossed = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
        "f4": "AS 2S 3S 4S 5S 6S 7S 8S 9S TS",  # wants J♠, Q♠, K♠
        "f8": "KS QS JS TS 9S 8S 7S 6S 5S 4S",  # wants 3♠, 2♠, A♠
    }
    model = model_for("patriarchs")
    # K♠ on top of the waste needs J♠ and Q♠, which lie under it; with no reserve card only
    # K♠'s own play could take it off. The stock's 3♠ goes home, but uncovers nothing.
    lost = position("patriarchs", redeals=1, waste="QS JS 2S KS", stock="AS 3S", **crossed)
    assert exhaustive(lost) is False
    assert not _dead_reference(PatriarchsModel(get_ruleset("patriarchs")), lost)
    assert model.dead(lost.piles, 1)
    assert solve(lost).outcome is Outcome.LOST
    # With J♠ and Q♠ in the stock instead, they are dealt and go home, then K♠: a win.
    won = position("patriarchs", redeals=1, waste="2S KS", stock="AS QS JS 3S", **crossed)
    assert exhaustive(won) is True
    assert not model.dead(won.piles, 1)
    assert solve(won).outcome is Outcome.WINNABLE


def test_patriarchs_waiting_past_the_same_plays_costs_once() -> None:
    """The priced search: dealing past a play costs one discrepancy; dealing past the same
    plays again, or taking one of them at last, costs nothing; plays cost nothing, and so do
    dealing onto an empty waste and the redeal."""
    bases = {f"f{i + 1}": "A" + s for i, s in enumerate("CDHS")}
    bases |= {f"f{i + 5}": "K" + s for i, s in enumerate("CDHS")}
    rules = get_ruleset("patriarchs")
    model = PatriarchsModel(rules)
    r1, f1, f2 = rules.reserves[0], rules.foundations[0], rules.foundations[1]
    play = (r1, f1, 1)
    deal = (rules.stock, rules.waste, 1)
    start = position("patriarchs", bases, r1="2C", waste="9S", stock="9D 2D 8D 7D")
    kids = model.children(start.piles, 0)
    assert [mv for mv, _, _ in kids] == [play, deal]
    assert model.price(start.piles, 0, kids, None) == [(0, None), (1, frozenset({play}))]
    # 7♦ dealt: nothing new to play, so dealing on (8♦) is still the same wait.
    waiting = frozenset({play})
    _, after, _ = kids[1]
    kids = model.children(after, 0)
    assert [mv for mv, _, _ in kids] == [play, deal]
    assert model.price(after, 0, kids, waiting) == [(0, None), (0, waiting)]
    # 2♦ dealt: a new play; passing it by is a new choice, and buries 2♦: it costs two.
    _, after, _ = model.children(model.children(after, 0)[1][1], 0)[1]
    kids = model.children(after, 0)
    both = frozenset({play, (rules.waste, f2, 1)})
    assert [mv for mv, _, _ in kids] == [(rules.waste, f2, 1), play, deal]
    assert model.price(after, 0, kids, waiting) == [(0, None), (0, None), (2, both)]
    assert model.price(after, 0, kids, None) == [(0, None), (0, None), (2, both)]
    # Waiting past both: dealing on costs nothing.
    assert model.price(after, 0, kids, both) == [(0, None), (0, None), (0, both)]
    bare = position("patriarchs", bases, stock="9D 8D")
    kids = model.children(bare.piles, 0)
    assert model.price(bare.piles, 0, kids, None) == [(0, None)]
    # Dealing onto an empty waste buries nothing, and the redeal is free: both cost nothing.
    empty = position("patriarchs", bases, r1="2C", stock="9D 8D")
    kids = model.children(empty.piles, 0)
    assert model.price(empty.piles, 0, kids, None) == [(0, None), (0, frozenset({play}))]
    turn = position("patriarchs", bases, r1="2C", waste="9D 8D")
    kids = model.children(turn.piles, 0)
    assert [mv for mv, _, _ in kids] == [play, (rules.waste, rules.stock, 2)]
    assert model.price(turn.piles, 0, kids, None) == [(0, None), (0, None)]


def _no_dead_ends() -> PatriarchsModel:
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_ends = False  # type: ignore[attr-defined]
    return model


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 4, 6, 9])
def test_the_patriarchs_dead_end_rule_never_calls_a_position_of_a_winning_line_lost(
    number: int,
) -> None:
    """Every position of a winning line found without the dead-end rule can be won, so the
    rule must let every one of them be."""
    rules = get_ruleset("patriarchs")
    deal = rules.deal(number)
    plain = _no_dead_ends()
    found = solve_piles(plain, deal.piles, 0, Budget(nodes=200_000))
    assert found.outcome is Outcome.WINNABLE, number
    model = PatriarchsModel(get_ruleset("patriarchs"))
    positions = line_positions(plain, deal.piles, 0, found.path)
    assert any(r == 1 for _, r in positions)  # the line goes into the last pass
    for piles, redeals in positions:
        assert not model.dead(piles, redeals)


@pytest.mark.slow
def test_patriarchs_bytes_piles_give_the_keys_and_moves_of_engine_piles() -> None:
    model = model_for("patriarchs")
    rules = get_ruleset("patriarchs")
    deal = rules.deal(3)
    found = solve(deal, Budget(nodes=200_000), short=False)
    state, redeals = deal, 0
    for mv in found.path[:150]:
        as_bytes = model.encode(state.piles)  # type: ignore[attr-defined]
        assert all(type(p) is bytes for p in as_bytes)
        assert model.key(as_bytes, redeals) == model.key(state.piles, redeals)
        kids = model.children(state.piles, redeals)
        assert [k[0] for k in kids] == [k[0] for k in model.children(as_bytes, redeals)]
        for step, child, _ in kids:
            after = rules.replay(state, to_moves(model, [step]))
            assert tuple(map(tuple, child)) == after.piles
        state = rules.replay(state, to_moves(model, [mv]))
        redeals = state.redeals


BASES = {f"f{i + 1}": "A" + s for i, s in enumerate("CDHS")}
BASES |= {f"f{i + 5}": "K" + s for i, s in enumerate("CDHS")}


def engine_agrees(state: State) -> list[str]:
    """The model's moves from ``state`` as text, each child checked against the engine."""
    rules = get_ruleset("patriarchs")
    model = PatriarchsModel(rules)
    out = []
    for step, child, redeals in model.children(state.piles, state.redeals):
        after = rules.replay(state, to_moves(model, [step]))
        assert tuple(map(tuple, child)) == after.piles and redeals == after.redeals
        out.append(" ".join(str(m) for m in to_moves(model, [step])))
    return out


def test_an_emptied_reserve_takes_the_wastes_top_else_the_stocks_else_stays_empty() -> None:
    rules = get_ruleset("patriarchs")
    model = PatriarchsModel(rules)
    for piles, refill in (
        ({"waste": "9D 5H", "stock": "7S"}, "5H"),
        ({"stock": "7S"}, "7S"),
        ({}, ""),
    ):
        state = position("patriarchs", {**BASES, "r1": "2C", **piles})
        assert engine_agrees(state)[0] == "r1-f1"
        _, after, _ = model.children(state.piles, 0)[0]
        assert tuple(after[rules.pile_index("r1")]) == cards(refill)


def test_a_meeting_suit_slides_the_fewest_transfers_joined_to_the_play() -> None:
    ranks = "A23456789TJQK"
    full = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
        "f4": "AS 2S 3S 4S 5S 6S",  # the Ace side at 6♠, the King side at 7♠: they meet
        "f8": "KS QS JS TS 9S 8S 7S",
    }
    # 4♠ goes on the King side after the Ace side gives up 6♠ and 5♠ (two transfers); 9♠ on
    # the Ace side after the King side gives up 7♠ and 8♠.
    assert engine_agrees(position("patriarchs", full, r1="4S")) == ["f4-f8 f4-f8 r1-f8"]
    assert engine_agrees(position("patriarchs", full, r1="9S")) == ["f8-f4 f8-f4 r1-f4"]
    # 8♠, two ranks above the Ace side's top: one transfer (7♠ over to the Ace side).
    assert engine_agrees(position("patriarchs", full, r1="8S")) == ["f8-f4 r1-f4"]


def test_won_only_with_the_stock_and_the_waste_empty_too() -> None:
    model = PatriarchsModel(get_ruleset("patriarchs"))
    ranks = "A23456789TJQK"
    up = {f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDHS")}
    down = {f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDHS")}
    assert model.won(position("patriarchs", {**up, **down}).piles)
    assert not model.won(position("patriarchs", {**up, **down}, stock="AS").piles)
    assert not model.won(position("patriarchs", {**up, **down}, waste="AS").piles)
    assert not model.won(position("patriarchs", {**up, **down}, r9="AS").piles)
