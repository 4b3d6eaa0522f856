"""Corners' search model (app/solver/corners.py): its dead-end rules say "lost" only where an
exhaustive search of the engine's own moves finds no win, and never on a position a winning
line passes through; its safe moves are played alone only where they keep every win."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, reject, settings
from hypothesis import strategies as st

from app.engine import State, get_ruleset
from app.solver import Budget, Outcome, solve
from app.solver.corners import CornersModel
from app.solver.lines import line_positions, to_moves
from app.solver.models import model_for
from app.solver.search import solve_piles
from tests.engine.builders import position, show
from tests.solver.positions import POSITIONS, corners_crowded, exhaustive, replays_to_a_win

RANKS = "A23456789TJQK"
CLUBS_BASES = {"f1": "AC", "f2": "QD", "f3": "KH", "f4": "8S"}  # each wants its next card
DONE = {"f2": " ".join(r + "D" for r in RANKS), "f4": " ".join(r + "S" for r in RANKS)}


def model() -> CornersModel:
    return CornersModel(get_ruleset("corners"))


def agrees_with_exhaustive_search(state: State, dead: bool) -> None:
    """A rule's ``dead`` on ``state`` is "lost" only where exhaustive search finds no win, and
    the solver's own answer is exhaustive search's (positions too big for it are rejected)."""
    truth = exhaustive(state)
    if truth is None:
        reject()
    note(f"dead={dead} truth={truth}")
    if dead:
        assert truth is False
    result = solve(state, Budget(nodes=2_000_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)


@st.composite
def last_pass_with_stock(draw: st.DrawFn) -> State:
    """A Corners ending in its last pass with cards still in the stock."""
    state = draw(POSITIONS["corners"])
    if not state.piles[get_ruleset("corners").stock]:
        reject()
    return State(state.game, state.piles, 2)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=last_pass_with_stock())
def test_the_last_pass_rule_says_lost_only_where_exhaustive_search_does(state: State) -> None:
    agrees_with_exhaustive_search(state, model().dead(state.piles, 2))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=corners_crowded(2))
def test_the_last_pass_rules_hold_in_crowded_endings(state: State) -> None:
    agrees_with_exhaustive_search(state, model().dead(state.piles, 2))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=corners_crowded(1))
def test_the_next_pass_rule_says_lost_only_where_exhaustive_search_does(state: State) -> None:
    agrees_with_exhaustive_search(state, model().stranded_next_pass(state.piles))


# ♣ wants 2♣; every other suit is home. The reserves hold 5♣ … 8♣ (none can go before 2♣ 3♣
# 4♣); the stock is empty and one redeal is left.
CLUBS = {**DONE, "f1": "AC", "f3": " ".join(r + "H" for r in RANKS)}
CLUB_RESERVES = {"r1": "5C", "r2": "6C", "r3": "7C", "r4": "8C"}


def test_a_pair_the_next_pass_deals_in_the_wrong_order_needs_a_free_reserve() -> None:
    # The next pass deals 3♣ 4♣ 2♣ T♣: 4♣ lands on 3♣ before 2♣ comes, and with 9♣ in the
    # fifth reserve no reserve can take either (none of their cards can go home first).
    m = model()
    stuck = position("corners", redeals=1, r5="9C", waste="3C 4C 2C TC", **CLUBS, **CLUB_RESERVES)
    assert m.stranded_next_pass(stuck.piles)
    assert m.dead(stuck.piles, 1)  # (the stock holds 0 cards: a multiple of the stride)
    assert exhaustive(stuck) is False
    assert solve(stuck).outcome is Outcome.LOST
    # With the fifth reserve vacant (9♣ in the waste), the redeal puts 3♣ there: a win.
    freed = position("corners", redeals=1, waste="3C 4C 2C 9C TC", **CLUBS, **CLUB_RESERVES)
    assert not m.stranded_next_pass(freed.piles)
    assert exhaustive(freed) is True
    assert solve(freed).outcome is Outcome.WINNABLE


def test_a_card_that_went_home_from_the_waste_frees_no_reserve_for_a_pull() -> None:
    # Last pass, no reserve card, ♣ wants 2♣ and ♦ wants 2♦; the stock deals 2♦ 3♣ 4♣ 2♣.
    # 2♦ goes home, but from the waste: 4♣ still lands on 3♣. (Counting every card that can go
    # home as a possible pull, the rule did not see this until 4♣ had landed.)
    m = model()
    piles = {**CLUBS, "f2": "AD", "stock": "2C 4C 3C 2D"}
    stuck = position("corners", redeals=2, **piles)
    assert m.stranded(stuck.piles)
    assert exhaustive(stuck) is False


def test_a_card_dealt_onto_one_of_its_suit_needed_first_must_be_pulled() -> None:
    # Last pass, ♣ wants 6♣ next; the stock deals 7♣, then 8♣ onto it, then 6♣. Both ♦ and ♠
    # are home; ♥ wants K♥.
    m = model()
    piles = {**DONE, "f1": "5C", "f3": "QH", "stock": "6C 8C 7C"}
    stuck = position("corners", redeals=2, **piles)
    # The waste is empty: the rule for two waste cards sees nothing yet.
    assert m.stranded(stuck.piles) and m.dead(stuck.piles, 2)
    assert exhaustive(stuck) is False
    assert solve(stuck).outcome is Outcome.LOST
    # With K♥ in a reserve, playing it while 8♣ is the stock's top pulls 8♣: a win.
    freed = position("corners", redeals=2, r1="KH", **piles)
    assert not m.dead(freed.piles, 2)
    assert exhaustive(freed) is True
    assert solve(freed).outcome is Outcome.WINNABLE
    # Before the last pass the rule says nothing (a redeal may come first).
    assert not m.dead(stuck.piles, 1)


def test_a_waste_card_nothing_can_reach_is_stranded() -> None:
    # 7♣ in the waste under 9♣ (the old rule's case), and the stock not empty.
    m = model()
    piles = {**DONE, "f1": "6C", "f3": "KH", "waste": "7C 9C", "stock": "8C"}
    stuck = position("corners", redeals=2, **piles)
    assert m.dead(stuck.piles, 2) and exhaustive(stuck) is False
    # 8♣ on top of 7♣ 9♣... the old rule's case with the stock's 8♣ below the buried pair.
    piles = {**DONE, "f1": "6C", "f3": "KH", "waste": "9C 7C", "stock": "8C"}
    fine = position("corners", redeals=2, **piles)
    assert not m.dead(fine.piles, 2) and exhaustive(fine) is True


@pytest.mark.slow
def test_no_position_on_a_winning_line_found_without_the_rules_is_called_lost() -> None:
    """Deals 1..30: the search with every dead-end rule switched off finds winning lines;
    the rules say "lost" at none of the positions those lines pass through."""
    rules = get_ruleset("corners")
    plain = model()
    plain.dead_ends = False  # type: ignore[attr-defined]
    judge = model()
    checked = 0
    for number in range(1, 31):
        deal = rules.deal(number)
        result = solve_piles(plain, deal.piles, 0, Budget(nodes=30_000))
        if result.outcome is not Outcome.WINNABLE:
            continue
        for piles, redeals in line_positions(plain, deal.piles, 0, result.path):
            assert not judge.dead(piles, redeals), number
            if redeals == 1:  # every position, not only those ``dead`` looks at
                assert not judge.stranded_next_pass(piles), number
            checked += 1
    assert checked > 1_000


@st.composite
def corners_last_pass_with_a_safe_move(draw: st.DrawFn) -> State:
    """A Corners ending in its last two passes where a safe move applies: the waste's top goes
    home (last pass, or stock empty with a redeal left), or (last pass, stock empty) a reserve
    card does."""
    state = draw(POSITIONS["corners"])
    model = model_for("corners")
    rules = get_ruleset("corners")
    redeals = draw(st.sampled_from([1, 2]))
    state = State(state.game, state.piles, redeals)
    kids = model.children(state.piles, redeals)
    every = model.all_children(state.piles, redeals)  # type: ignore[attr-defined]
    if len(kids) != 1 or len(every) == 1:
        reject()
    assert kids[0][0][1] in rules.foundations
    return state


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=corners_last_pass_with_a_safe_move())
def test_corners_last_pass_safe_moves_keep_the_answer_of_exhaustive_search(state: State) -> None:
    truth = exhaustive(state)
    if truth is None:
        reject()
    result = solve(state, Budget(nodes=2_000_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.moves)


def test_corners_plays_a_safe_move_alone_only_in_the_last_pass() -> None:
    # 9♣ on the waste fits the ♣ foundation (8♣); a stock card and a reserve card are left.
    model = model_for("corners")
    rules = get_ruleset("corners")
    piles = {"f1": "8C", "f2": "KD", "f3": "KH", "f4": "KS", "r1": "AD", "waste": "9C"}
    for redeals, alone in ((0, False), (1, False), (2, True)):
        state = position("corners", redeals=redeals, stock="AH", **piles)
        kids = model.children(state.piles, redeals)
        assert (len(kids) == 1) is alone, (redeals, kids)
        assert kids[0][0] == (rules.waste, rules.foundations[0], 1)
    # The stock empty: forced with one redeal left too, not with two.
    for redeals, alone in ((0, False), (1, True), (2, True)):
        state = position("corners", redeals=redeals, **piles)
        assert (len(model.children(state.piles, redeals)) == 1) is alone, redeals
    # A reserve card going home refills from the stock: forced only once the stock is empty.
    reserve_only = {**piles, "waste": "", "r1": "9C"}
    with_stock = position("corners", redeals=2, stock="AH", **reserve_only)
    assert len(model.children(with_stock.piles, 2)) > 1
    empty = position("corners", redeals=2, **{**reserve_only, "waste": "5H"})
    assert [k[0] for k in model.children(empty.piles, 2)] == [
        (rules.reserves[0], rules.foundations[0], 1)
    ]


def test_moves_come_home_first_then_dealing_and_each_is_the_engines() -> None:
    rules = get_ruleset("corners")
    m = model()
    state = position("corners", CLUBS_BASES, r2="AH", r4="TS", waste="2C", stock="4D")
    kids = m.children(state.piles, 0)
    assert [str(mv) for mv in to_moves(m, [k[0] for k in kids])] == [
        "waste-f1",
        "r2-f3",
        "stock-waste",
    ]
    for mv, child, redeals in kids:
        after = rules.replay(state, to_moves(m, [mv]))
        assert child == after.piles and redeals == after.redeals


def test_a_redeal_fills_the_vacant_reserves_in_order_as_the_engine_does() -> None:
    rules = get_ruleset("corners")
    m = model()
    state = position("corners", CLUBS_BASES, r2="9H", r4="TS", waste="2D 5H 6S 7C")
    (kid,) = [k for k in m.children(state.piles, 0) if k[0][0] == rules.waste]
    mv, child, redeals = kid
    assert mv == (rules.waste, rules.stock, 4) and redeals == 1
    after = rules.replay(state, to_moves(m, [mv]))
    assert child == after.piles
    assert [show(after, r) for r in ("r1", "r3", "r5", "stock")] == ["2D", "5H", "6S", "7C"]
    assert m.children(state.piles, 2) == []  # no redeal left, no move


def test_the_key_does_not_tell_which_reserve_holds_which_card() -> None:
    m = model()
    one = position("corners", CLUBS_BASES, r1="9H", r4="TS", waste="2D", stock="7C")
    other = position("corners", CLUBS_BASES, r5="9H", r2="TS", waste="2D", stock="7C")
    assert m.key(one.piles, 1) == m.key(other.piles, 1)
    assert m.key(one.piles, 1) != m.key(one.piles, 2)
    swapped = position("corners", CLUBS_BASES, r1="9H", r4="TS", waste="7C", stock="2D")
    assert m.key(swapped.piles, 1) != m.key(one.piles, 1)
