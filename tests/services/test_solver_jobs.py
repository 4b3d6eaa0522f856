"""What a solver worker runs (app/services/solver_jobs.py): a deal's verdict, a hint, a finished
game's analysis, as plain values; bounded by positions, and by a deadline when given one.
Castle's End deals 1 (winnable) and 3 (lost) are decided in a few thousand positions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.engine import DEVELOPMENT_KEY, Move, dumps, get_ruleset
from app.services import solver_jobs
from app.services.solver_jobs import (
    ESTIMATE_NODES,
    ESTIMATE_NODES_BY_GAME,
    Verdict,
    analysis_job,
    hint_job,
    judge_deal,
    lost_deal_analysis,
    undecided_analysis,
)
from app.solver import Budget, Outcome, hint

SLUG, WON, LOST = "castles-end", 1, 3
NODES = 20_000


@pytest.fixture(scope="module")
def verdict() -> Verdict:
    return judge_deal(SLUG, WON, DEVELOPMENT_KEY, NODES)


def test_a_winnable_verdict_carries_a_line_that_wins(verdict: Verdict) -> None:
    assert (verdict.game, verdict.deal, verdict.outcome) == (SLUG, WON, Outcome.WINNABLE)
    assert 0 < verdict.positions <= NODES
    rules = get_ruleset(SLUG)
    assert rules.is_won(rules.replay(rules.deal(WON, DEVELOPMENT_KEY), verdict.solution))


def test_a_lost_deal_and_an_undecided_one() -> None:
    lost = judge_deal(SLUG, LOST, DEVELOPMENT_KEY, NODES)
    assert lost.outcome is Outcome.LOST and lost.solution == ()
    cut_short = judge_deal(SLUG, WON, DEVELOPMENT_KEY, 10)
    assert cut_short.outcome is Outcome.UNKNOWN and cut_short.positions <= 10


def test_the_deadline_check() -> None:
    assert solver_jobs._deadline_check(None) is None  # positions alone
    passed = solver_jobs._deadline_check(-1.0)
    ahead = solver_jobs._deadline_check(3600.0)
    assert passed is not None and passed()
    assert ahead is not None and not ahead()


def test_an_exact_hint_comes_with_its_winning_line_as_plain_values() -> None:
    state = get_ruleset(SLUG).deal(WON, DEVELOPMENT_KEY)
    given = hint_job(dumps(state), None, NODES)
    assert json.loads(json.dumps(given)) == given  # it crosses a process boundary
    assert given["outcome"] == "winnable" and given["exact"] is True
    first = Move.parse(given["line"][0])
    assert given["move"] == {"from": first.source, "to": first.target, "count": first.count}
    rules = get_ruleset(SLUG)
    assert rules.is_won(rules.replay(state, [Move.parse(m) for m in given["line"]]))


@pytest.mark.parametrize(
    ("slug", "cap"), [("corners", ESTIMATE_NODES), *ESTIMATE_NODES_BY_GAME.items()]
)
def test_a_hint_where_cards_are_hidden_searches_within_the_estimate_budget(
    slug: str, cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    budgets: list[Budget] = []

    def fake_hint(state: Any, budget: Budget, *, samples: int) -> Any:
        budgets.append(budget)
        return hint(state, Budget(nodes=10), samples=1)  # the same answer's shape, at once

    state = get_ruleset(slug).deal(1, DEVELOPMENT_KEY)
    monkeypatch.setattr(solver_jobs, "hint", fake_hint)
    given = hint_job(dumps(state), None, 10 * cap)
    assert [b.nodes for b in budgets] == [cap]
    assert given["exact"] is False and given["line"] == []


def test_the_analysis_finds_the_move_that_lost_a_winnable_deal() -> None:
    rules = get_ruleset(SLUG)
    state = rules.deal(WON, DEVELOPMENT_KEY)
    bad = rules.legal_moves(state)[-1]  # a move the analysis finds loses this deal
    found = analysis_job(SLUG, WON, DEVELOPMENT_KEY, [str(bad)], "winnable", None, NODES)
    assert found["decided"] and found["deal_winnable"] is True and found["knowing"] == "all"
    slip = found["slip"]
    assert slip["ply"] == 1
    assert slip["move"] == {"from": bad.source, "to": bad.target, "count": bad.count}
    better = Move(slip["better"]["from"], slip["better"]["to"], slip["better"]["count"])
    assert better != bad and better in rules.legal_moves(state)


def test_the_solvers_own_line_has_no_slip(verdict: Verdict) -> None:
    line = [str(m) for m in verdict.solution]
    found = analysis_job(SLUG, WON, DEVELOPMENT_KEY, line, "winnable", None, NODES)
    assert found == {"deal_winnable": True, "slip": None, "knowing": "all", "decided": True}


def test_an_analysis_cut_short_claims_nothing() -> None:
    found = analysis_job(SLUG, WON, DEVELOPMENT_KEY, ["t10-f4"], None, None, 5)
    assert found == undecided_analysis()
    assert found["deal_winnable"] is None and not found["decided"]


def test_a_lost_deals_analysis() -> None:
    assert lost_deal_analysis() == {
        "deal_winnable": False, "slip": None, "knowing": "all", "decided": True,
    }  # fmt: skip
