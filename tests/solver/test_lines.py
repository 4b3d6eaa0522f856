"""Winning lines (app/solver/lines.py): the positions a line passes through, shortening it
(moves that cancel out, detours, single moves dropped) and writing it as engine moves."""

from __future__ import annotations

import pytest

from app.engine import Move, get_ruleset
from app.solver import Budget, Outcome, model_for, solve
from app.solver.lines import line_positions, shorten, to_moves
from app.solver.position import encoded
from tests.engine.builders import position


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


@pytest.mark.slow
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


def test_line_positions_follow_the_models_moves_and_refuse_one_not_offered() -> None:
    state = position("castles-end", f1="5S", t1="7S 6S", t2="8S")
    model = model_for("castles-end")
    home = (4, 0, 1)  # t1 → f1
    positions = line_positions(model, state.piles, 0, [home, home])
    assert len(positions) == 3 and positions[0] == (encoded(model, state.piles), 0)
    end = get_ruleset("castles-end").replay(state, [Move("t1", "f1")] * 2)
    assert tuple(map(tuple, positions[-1][0])) == end.piles and positions[-1][1] == 0
    with pytest.raises(ValueError, match="not offered"):
        line_positions(model, state.piles, 0, [(5, 0, 1)])  # 8♠ cannot go home yet


def test_a_line_with_nothing_to_drop_is_kept() -> None:
    state = position("castles-end", f1="5S", t1="7S 6S", t2="8S")
    model = model_for("castles-end")
    line = ((4, 0, 1), (4, 0, 1), (5, 0, 1))
    assert shorten(model, state.piles, 0, line) == line


def test_to_moves_writes_each_step_as_engine_moves_joined_steps_one_by_one() -> None:
    model = model_for("patriarchs")  # (its slides join transfers to the play they allow)
    ids = model.pile_ids
    f4, f8, r1 = ids.index("f4"), ids.index("f8"), ids.index("r1")
    waste, stock = ids.index("waste"), ids.index("stock")
    path = [(f4, f8, 1, f4, f8, 1, r1, f8, 1), (waste, stock, 12)]
    assert [str(m) for m in to_moves(model, path)] == ["f4-f8", "f4-f8", "r1-f8", "waste-stock/12"]
    assert to_moves(model, []) == ()
