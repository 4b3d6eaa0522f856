"""Where a finished game slipped: the first move after which its deal, knowing every card,
could no longer be won, from a position that could, and a move from there that keeps it won.

Winnability only ever falls along a game: every position reachable after a move is reachable
before it, so once a position is lost every later one is lost too. So the slip is found by
bisection between the deal (winnable) and the final position (lost): a handful of searches,
each a proof (a winning line, or every reachable position searched). Any search cut short by
its budget leaves the answer undecided, and it says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.engine import Move, State, get_ruleset
from app.solver.models import model_for
from app.solver.result import Budget, Outcome, Result
from app.solver.search import solve_state


@dataclass(frozen=True, slots=True)
class Slip:
    ply: int  # 1-based: the ply-th move in force of the game
    move: Move  # the move played there
    better: Move  # a move from the same position that keeps the deal winnable


@dataclass(frozen=True, slots=True)
class Analysis:
    deal_winnable: bool | None  # None: undecided within the budget
    slip: Slip | None
    decided: bool  # False: some search was cut short; nothing below it is claimed
    searches: int = 0
    final_winnable: bool | None = None  # the last position (a game resigned while winnable)


def analyse(
    start: State,
    moves: Sequence[Move],
    budget: Budget,
    *,
    deal_outcome: Outcome | None = None,
) -> Analysis:
    """Analyse a game played from ``start`` by ``moves`` (the moves in force), each search
    within ``budget``. ``deal_outcome`` is a verdict already known for ``start`` (saves a
    search); a winnable one is searched again for a line only at the slip."""
    rules = get_ruleset(start.game)
    model = model_for(start.game)
    positions = [start]
    for move in moves:
        positions.append(rules.apply(positions[-1], move))
    results: dict[int, Result] = {}
    searches = 0

    def solve_at(i: int) -> Result:
        nonlocal searches
        if i not in results:
            searches += 1
            results[i] = solve_state(model, positions[i], budget, short=False)
        return results[i]

    first: Outcome | None = (
        deal_outcome if deal_outcome in (Outcome.WINNABLE, Outcome.LOST) else None
    )
    if first is None:
        first = solve_at(0).outcome
    if first is Outcome.LOST:
        return Analysis(False, None, True, searches)
    if first is not Outcome.WINNABLE:
        return Analysis(None, None, False, searches)
    last = len(positions) - 1
    if rules.is_won(positions[last]):
        return Analysis(True, None, True, searches, True)
    end = solve_at(last).outcome
    if end is Outcome.WINNABLE:
        return Analysis(True, None, True, searches, True)
    if end is not Outcome.LOST:
        return Analysis(True, None, False, searches)
    lo, hi = 0, last  # lo winnable, hi lost
    while hi - lo > 1:
        mid = (lo + hi) // 2
        outcome = solve_at(mid).outcome
        if outcome is Outcome.WINNABLE:
            lo = mid
        elif outcome is Outcome.LOST:
            hi = mid
        else:
            return Analysis(True, None, False, searches, False)
    line = solve_at(lo)
    if line.outcome is not Outcome.WINNABLE or not line.moves:
        return Analysis(True, None, False, searches, False)
    return Analysis(True, Slip(hi, moves[hi - 1], line.moves[0]), True, searches, False)
