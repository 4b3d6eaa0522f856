"""Quadruple Interchange's search model and the search layered by the stock: safe foundation
moves, the layered search's answers against exhaustive search on small positions, and its lines
replayed through the engine."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from app.engine import State, get_ruleset
from app.solver import Budget, Outcome, model_for
from app.solver.lines import to_moves
from app.solver.quadruple_interchange import ForcingModel, QuadrupleInterchangeModel
from app.solver.searches import dfs, layered
from tests.engine.builders import position
from tests.solver.positions import exhaustive, rest_empty

QI = "quadruple-interchange"


MODEL = ForcingModel(get_ruleset(QI))


def model() -> ForcingModel:
    return MODEL


def test_the_services_model_forces_no_move() -> None:
    service = model_for(QI)
    assert isinstance(service, QuadrupleInterchangeModel) and not service.safe_moves
    state = position(QI, t1="5C AH", t2="6C", waste="4C", stock="9D")
    kids = service.children(state.piles, state.redeals)
    assert len(kids) > 1 and len(kids) == len(MODEL.all_children(state.piles, state.redeals))


def moves_of(state: State, *, every: bool = False) -> set[str]:
    m = model()
    kids = (m.all_children if every else m.children)(state.piles, state.redeals)
    return {str(move) for mv, _, _ in kids for move in to_moves(m, [mv])}


def full(suit: str, top: str = "K", copies: int = 4, first: int = 1) -> dict[str, str]:
    """Foundations ``f{first}``… each holding ``suit`` from the Ace up to ``top``."""
    ranks = "A23456789TJQK"
    pile = " ".join(r + suit for r in ranks[: ranks.index(top) + 1])
    return {f"f{first + i}": pile for i in range(copies)}


def homes(clubs: str = "K", diamonds: str = "K") -> dict[str, str]:
    """All sixteen foundations: clubs to ``clubs``, diamonds to ``diamonds``, the rest full."""
    return {
        **full("C", clubs),
        **full("D", diamonds, first=5),
        **full("H", first=9),
        **full("S", first=13),
    }


def replays_to_a_win(state: State, path: tuple[tuple[int, ...], ...]) -> bool:
    rules = get_ruleset(QI)
    at = state
    for move in to_moves(model(), path):
        at = rules.apply(at, move)  # raises IllegalMove on a move the engine refuses
    return rest_empty(rules, at)


def test_an_ace_that_can_go_home_is_the_only_move_offered() -> None:
    state = position(QI, t1="5C AH", t2="6C", waste="4C", stock="9D")
    assert moves_of(state) == {"t1-f1"}
    assert len(moves_of(state, every=True)) > 1  # the other moves still exist


def test_a_two_goes_home_alone_from_the_waste() -> None:
    state = position(QI, f1="AH", t1="5C", t2="6C", waste="2H", stock="9D")
    assert moves_of(state) == {"waste-f1"}


def test_a_three_goes_home_alone_only_when_all_four_twos_of_its_suit_are_home() -> None:
    three_twos = {**full("H", "2", 3), "f4": "AH"}
    state = position(QI, three_twos, t1="5C 3H", t2="4H 2H", t3="6C", stock="9D")
    # A 2♥ is still out: the 3♥ may be needed to hold it, so it is not forced home (the 2♥
    # itself is, being a 2).
    assert moves_of(state) == {"t2-f4"}
    after = position(QI, {**three_twos, "f4": "AH 2H"}, t1="5C 3H", t2="4H", t3="6C", stock="9D")
    assert moves_of(after) == {"t1-f1"}
    not_yet = position(QI, three_twos, t1="5C 3H", t2="4H", t3="6C", waste="2H", stock="9D")
    # (the waste's 2♥ goes first: it is forced; with it out of play, nothing is)
    assert moves_of(not_yet) == {"waste-f4"}
    blocked = position(QI, three_twos, t1="5C 3H", t2="2H 4H", t3="6C", stock="9D")
    assert "t1-f1" in moves_of(blocked) and len(moves_of(blocked)) > 1


def test_progress_counts_cards_home_face_down_cards_and_empty_piles() -> None:
    m = model()
    base = position(QI, full("S", "Q"), t1="(KS) KS", t2="KS", t3="KS")
    home = position(QI, full("S", "Q"), f1="AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS",
                    t1="(KS) KS", t3="KS")  # fmt: skip
    turned = position(QI, full("S", "Q"), t1="KS KS", t2="KS", t3="KS")
    assert m.progress(home.piles) > m.progress(base.piles)
    assert m.progress(turned.piles) > m.progress(base.piles)


def test_the_layered_search_digs_deals_and_wins_through_the_engine() -> None:
    # Clubs are home to the Jack, diamonds to the 10. The Jacks of diamonds go home and turn
    # Kings of clubs up; the Queens of diamonds follow, the waste's King and Queen of diamonds
    # after them, then the stock's Queens of clubs let the Kings go home.
    state = position(
        QI,
        homes(clubs="J", diamonds="T"),
        t1="QC (KC) JD",
        t2="KD (KC) QD",
        t3="QC (KC) JD",
        waste="QD KD",
        stock="KC QC JD QC",
    )
    result = layered(model(), state.piles, state.redeals, Budget(nodes=50_000), width=1)
    assert result.outcome is Outcome.WINNABLE
    assert replays_to_a_win(state, result.path)


def test_a_lost_position_is_proved_lost_once_a_round_cuts_nothing() -> None:
    # No Jack of clubs is left, so no Queen or King of clubs can ever go home; the stock's
    # Queen of diamonds frees a pile to shuffle them in, and no more.
    state = position(
        QI,
        homes(clubs="T", diamonds="J"),
        t1="QC KC",
        t2="KD",
        t3="KD",
        t4="KD",
        t5="KD",
        t6="KC",
        t7="KC",
        t8="KC",
        t9="QC",
        t10="QC",
        t11="QC",
        stock="QD",
    )
    assert exhaustive(state) is False
    result = layered(model(), state.piles, state.redeals, Budget(nodes=10_000), width=1)
    assert result.outcome is Outcome.LOST


def test_the_node_budget_is_honoured_on_a_whole_deal() -> None:
    deal = get_ruleset(QI).deal(1)
    result = layered(model(), deal.piles, deal.redeals, Budget(nodes=500))
    assert result.outcome is Outcome.UNKNOWN
    assert result.nodes <= 500 and result.path == ()


def test_the_out_of_time_check_stops_the_layered_search() -> None:
    calls: list[int] = []

    def out_of_time() -> bool:
        calls.append(1)
        return len(calls) >= 2

    deal = get_ruleset(QI).deal(1)
    budget = Budget(nodes=10**9, out_of_time=out_of_time, check_every=50)
    result = layered(model(), deal.piles, deal.redeals, budget)
    assert result.outcome is Outcome.UNKNOWN and result.out_of_time
    assert result.nodes <= 100


@st.composite
def ending(draw: st.DrawFn) -> State:
    """A Quadruple Interchange position near its end: each foundation built from the Ace to a
    rank from 10 to King, and up to 8 of the missing cards (of any suits, so that the four
    foundations of a suit differ: the safe moves' rule is exercised) over the waste, the stock
    and the tableau, where any card but a pile's top may lie face down."""
    rules = get_ruleset(QI)
    piles: list[tuple[int, ...]] = [()] * len(rules.pile_ids)
    missing: list[int] = []
    for i, f in enumerate(rules.foundations):
        s = i // 4
        n = draw(st.integers(10, 13))
        piles[f] = tuple(s * 13 + r for r in range(n))
        missing += [s * 13 + r for r in range(n, 13)]
    loose = draw(st.permutations(missing))[: draw(st.integers(1, 8))]
    in_tableau = draw(st.integers(0, len(loose)))
    spread: list[list[int]] = [[] for _ in rules.tableau]
    for c in loose[:in_tableau]:
        spread[draw(st.integers(0, 3))].append(c)
    for t, pile in zip(rules.tableau, spread):
        piles[t] = tuple(
            ~c if i < len(pile) - 1 and draw(st.booleans()) else c for i, c in enumerate(pile)
        )
    split = draw(st.integers(in_tableau, len(loose)))
    piles[rules.waste] = tuple(loose[in_tableau:split])
    piles[rules.stock] = tuple(loose[split:])
    return State(QI, tuple(piles))


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(state=ending())
def test_layered_answers_agree_with_exhaustive_search(state: State) -> None:
    truth = exhaustive(state)
    if truth is None:
        return
    result = layered(model(), state.piles, state.redeals, Budget(nodes=200_000), width=2)
    note(f"{result}")
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.path)


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(state=ending())
def test_with_its_safe_moves_the_depth_first_search_agrees_with_exhaustive_search(
    state: State,
) -> None:
    truth = exhaustive(state)
    if truth is None:
        return
    result = dfs(model(), state.piles, state.redeals, Budget(nodes=200_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
