"""What a solver worker process runs: a hint, a finished game's analysis, a deal's verdict.
Each is a plain function of plain values (they cross a process boundary), bounded by nodes and,
unless its seconds are None, by a deadline the worker checks on its own clock; the pure solver
does the searching."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.engine import Move, get_ruleset, loads
from app.solver import Budget, Outcome, hint, solve
from app.solver.analysis import analyse
from app.solver.hints import SAMPLES
from app.solver.sampling import fully_visible

HINT_NODES = 2_000_000  # the time budget ends hint searches first on this machine
CERTIFY_NODES = 300_000
CERTIFY_SECONDS = 10.0
# A deal judged when a game of it ends: bench/RESULTS.md ("Solver") shows what this decides.
JUDGE_NODES = 300_000
BUSY_SLACK_SECONDS = 5.0  # waiting for a free worker, on top of the search's own budget
POOLS_SECONDS = 30.0  # how long the home page may show which games have a certified pool


def _deadline_check(seconds: float | None) -> Callable[[], bool] | None:
    """None (positions alone bound the search) when ``seconds`` is None (SOLVER_TIME_LIMITS)."""
    if seconds is None:
        return None
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() > deadline


# Hints from sampled arrangements of the hidden cards: positions searched for one hint, shared
# by the arrangements (hints.SAMPLES), sized to answer in about a second on this machine when
# it is quiet (bench/RESULTS.md, "The coach"). Node budgets, not the clock, decide what the
# search sees, so equal views get equal hints; the clock only stops a hint that runs late.
ESTIMATE_NODES = 80_000
ESTIMATE_NODES_BY_GAME = {"quadruple-interchange": 16_000}


# When no worker answers in time (a busy box: the workers run in the idle scheduling class),
# a hint where cards are hidden is still given, from a quick estimate in the app process: two
# arrangements, this many positions in all (a few milliseconds).
QUICK_ESTIMATE_NODES = 2_000
QUICK_ESTIMATE_SAMPLES = 2


def hint_job(
    state_text: str, seconds: float | None, nodes: int = HINT_NODES, samples: int = SAMPLES
) -> dict[str, Any]:
    """A hint for a stored state; runs in a worker process. An exact winnable hint comes with
    its whole winning line (``line``, move texts), for the service to keep with the game."""
    state = loads(state_text)
    if not fully_visible(state):
        nodes = min(nodes, ESTIMATE_NODES_BY_GAME.get(state.game, ESTIMATE_NODES))
    budget = Budget(nodes=nodes, out_of_time=_deadline_check(seconds))
    given = hint(state, budget, samples=samples)
    move = given.move
    return {
        "move": None
        if move is None
        else {"from": move.source, "to": move.target, "count": move.count},
        "outcome": str(given.outcome),
        "exact": given.exact,
        "message": given.message,
        "chance": given.chance,
        "words": list(given.words),  # an estimate's message as data, for the player's language
        "line": [str(m) for m in given.line],
    }


# The analysis of a finished game: positions per search, and seconds for all its searches.
ANALYSIS_NODES = 300_000
# The analysis as a durable job (SOLVER_JOBS): the worker's budget (nobody is held up by it),
# and how often a request waiting for the worker's answer looks for it.
ANALYSIS_JOB_SECONDS = 20.0
ANALYSIS_POLL_SECONDS = 0.2


def _move_json(move: Move) -> dict[str, Any]:
    return {"from": move.source, "to": move.target, "count": move.count}


def analysis_job(
    slug: str,
    number: int,
    key: bytes,
    moves: list[str],
    known: str | None,
    seconds: float | None,
    nodes: int = ANALYSIS_NODES,
) -> dict[str, Any]:
    """The analysis of a finished game (contract v3); runs in a worker process. ``known``:
    the deal's stored verdict, if decided."""
    rules = get_ruleset(slug)
    found = analyse(
        rules.deal(number, key),
        [Move.parse(m) for m in moves],
        Budget(nodes=nodes, out_of_time=_deadline_check(seconds)),
        deal_outcome=Outcome(known) if known else None,
    )
    slip = found.slip
    if not found.decided:
        return undecided_analysis()
    return {
        "deal_winnable": found.deal_winnable,
        "slip": None
        if slip is None
        else {"ply": slip.ply, "move": _move_json(slip.move), "better": _move_json(slip.better)},
        "knowing": "all",
        "decided": found.decided,
    }


def undecided_analysis() -> dict[str, Any]:
    """An analysis the solver could not settle: ``deal_winnable`` is null then (contract v3),
    even for a deal known to be winnable — a client reading ``"deal_winnable": true`` with no
    slip would take the game for won, or left while still winnable."""
    return {"deal_winnable": None, "slip": None, "knowing": "all", "decided": False}


def lost_deal_analysis() -> dict[str, Any]:
    """The analysis of a game of a deal proved lost: no move of the game lost it."""
    return {"deal_winnable": False, "slip": None, "knowing": "all", "decided": True}


@dataclass(frozen=True)
class Verdict:
    game: str
    deal: int
    outcome: Outcome
    solution: tuple[Move, ...]
    positions: int


def judge_deal(
    slug: str, number: int, key: bytes, nodes: int = CERTIFY_NODES, seconds: float | None = None
) -> Verdict:
    """Solve a deal with every card known, within ``nodes`` positions (and ``seconds``, unless
    None); a winning line is shortened and replayed through the engine before it is
    believed."""
    rules = get_ruleset(slug)
    deal = rules.deal(number, key)
    result = solve(deal, Budget(nodes=nodes, out_of_time=_deadline_check(seconds)))
    if result.outcome is Outcome.WINNABLE and not rules.is_won(rules.replay(deal, result.moves)):
        raise AssertionError(f"{slug} deal {number}: the solver's line does not win")
    return Verdict(slug, number, result.outcome, result.moves, result.nodes)
