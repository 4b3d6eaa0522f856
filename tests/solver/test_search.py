"""The solver's answers: winning lines replay through the engine, "lost" agrees with an
exhaustive search, and budgets are honoured."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, reject, settings
from hypothesis import strategies as st

from app.engine import GAMES, Move, State, get_ruleset
from app.solver import Budget, Outcome, model_for, solve
from app.solver.search import line_positions, shorten
from tests.engine.builders import position
from tests.solver.positions import POSITIONS, exhaustive, rest_empty


def replays_to_a_win(state: State, moves: tuple[Move, ...]) -> bool:
    rules = get_ruleset(state.game)
    return rest_empty(rules, rules.replay(state, moves))


@pytest.mark.parametrize("game", sorted(POSITIONS))
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_answers_agree_with_exhaustive_search(game: str, data: st.DataObject) -> None:
    state = data.draw(POSITIONS[game])
    truth = exhaustive(state)
    if truth is None:
        reject()
    result = solve(state, Budget(nodes=2_000_000))
    note(f"{result}")
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.moves)


DEALS = {
    "castles-end": range(1, 13),
    "corners": range(1, 13),
    "patriarchs": range(1, 4),
    "quadrangle": range(1, 4),
    "quadruple-interchange": range(1, 3),
}


@pytest.mark.parametrize("game", sorted(DEALS))
def test_every_solution_of_a_deal_replays_through_the_engine_to_a_win(game: str) -> None:
    rules = get_ruleset(game)
    decided = 0
    for number in DEALS[game]:
        deal = rules.deal(number)
        result = solve(deal, Budget(nodes=20_000))
        if result.outcome is Outcome.WINNABLE:
            assert rules.is_won(rules.replay(deal, result.moves)), number
            decided += 1
        elif result.outcome is Outcome.LOST:
            decided += 1
    if game == "castles-end":  # every Castle's End deal is decided within this budget
        assert decided == len(DEALS[game])


def test_castles_end_has_won_and_lost_deals_and_lost_ones_are_exhaustively_lost() -> None:
    rules = get_ruleset("castles-end")
    outcomes = {}
    for number in range(1, 13):
        outcomes[number] = solve(rules.deal(number), Budget(nodes=200_000)).outcome
    assert set(outcomes.values()) == {Outcome.WINNABLE, Outcome.LOST}
    # A lost deal's whole tree is small: the engine alone, exactly, agrees.
    lost = [n for n, o in outcomes.items() if o is Outcome.LOST]
    checked = 0
    for number in lost:
        truth = exhaustive(rules.deal(number), limit=60_000)
        if truth is not None:
            assert truth is False, number
            checked += 1
    assert checked >= 1


def test_shortened_lines_still_win_and_are_no_longer() -> None:
    model = model_for("castles-end")
    rules = get_ruleset("castles-end")
    for number in range(1, 13):
        deal = rules.deal(number)
        raw = solve(deal, Budget(nodes=200_000), short=False)
        if raw.outcome is not Outcome.WINNABLE:
            continue
        short = shorten(model, deal.piles, deal.redeals, raw.path)
        assert len(short) <= len(raw.path)
        end, _ = line_positions(model, deal.piles, deal.redeals, short)[-1]
        assert model.won(end)
        assert solve(deal, Budget(nodes=200_000)).path == short


def test_moves_that_cancel_out_are_dropped() -> None:
    state = position("castles-end", f1="5S", t1="6S", t2="7S 4S", t3="9H 8H", t4="2D")
    model = model_for("castles-end")
    rules = get_ruleset("castles-end")
    # 8♥ goes across and back (cancelling out), then two spades go home.
    line = ["t3-t5", "t5-t3", "t1-f1", "t2-t1", "t2-f1"]
    path = [
        (rules.pile_index(m.source), rules.pile_index(m.target), 1) for m in map(Move.parse, line)
    ]
    end = rules.replay(state, [Move.parse(m) for m in line])
    short = shorten(model, state.piles, 0, path)
    assert len(short) == 3
    positions = line_positions(model, state.piles, 0, short)
    assert model.key(*positions[-1]) == model.key(end.piles, 0)


def test_a_node_budget_is_honoured() -> None:
    deal = get_ruleset("quadruple-interchange").deal(1)
    result = solve(deal, Budget(nodes=500))
    assert result.outcome is Outcome.UNKNOWN
    assert result.nodes <= 500
    assert result.moves == ()


def test_the_out_of_time_check_stops_the_search() -> None:
    calls = []

    def out_of_time() -> bool:
        calls.append(1)
        return len(calls) >= 3

    deal = get_ruleset("quadruple-interchange").deal(1)
    result = solve(deal, Budget(nodes=10**9, out_of_time=out_of_time, check_every=100))
    assert result.outcome is Outcome.UNKNOWN and result.out_of_time
    assert len(calls) == 3
    assert result.nodes <= 300


def test_a_won_position_needs_no_moves() -> None:
    state = position("castles-end", f1="AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    assert solve(state).outcome is Outcome.WINNABLE
    assert solve(state).moves == ()


def test_every_game_has_a_model() -> None:
    assert {model_for(g).slug for g in GAMES} == set(GAMES)


def test_patriarchs_slides_a_meeting_point_to_play_a_card() -> None:
    ranks = "A23456789TJQK"
    full = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
    }
    state = position(
        "patriarchs",
        f4="AS 2S 3S 4S 5S 6S",
        f8="KS QS JS TS 9S 8S 7S",
        r1="4S",
        **full,
    )
    result = solve(state)
    assert result.outcome is Outcome.WINNABLE
    assert [str(m) for m in result.moves] == ["f4-f8", "f4-f8", "r1-f8"]
    assert replays_to_a_win(state, result.moves)
    # Every meeting point of a suit is one position for the search.
    model = model_for("patriarchs")
    slid = get_ruleset("patriarchs").apply(state, Move.parse("f4-f8"))
    assert model.key(slid.piles, 0) == model.key(state.piles, 0)
