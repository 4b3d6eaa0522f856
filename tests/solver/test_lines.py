"""Winning lines (app/solver/lines.py): the positions a line passes through, shortening it
(moves that cancel out, detours, single moves dropped) and writing it as engine moves."""

from __future__ import annotations

import pytest

from app.engine import Move, get_ruleset
from app.solver import Budget, Outcome, model_for, solve
from app.solver.lines import line_positions, shorten
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
