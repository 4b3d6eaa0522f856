"""The solver's search: a portfolio of the searches (app/solver/searches.py) run from one
position within one budget, and an engine state solved with its winning line shortened and
written as engine moves (app/solver/lines.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from app.engine import State
from app.solver.lines import shorten, to_moves
from app.solver.position import Model, Piles, encoded
from app.solver.result import Budget, Outcome, Result
from app.solver.searches import best_first, dfs, lds, priced

# The portfolio's first search: a plain depth-first search with this share of the budget, at
# most ``FIRST_DFS_NODES`` positions (issue #22: Quadrangle deal 3 took 100,307 positions in
# the discrepancy search and 295 depth-first; easy wins must never be missed).
FIRST_DFS_SHARE = 0.05
FIRST_DFS_NODES = 20_000


def solve_piles(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """Search from one position with a portfolio: first a short plain depth-first search
    (``FIRST_DFS_SHARE`` of the budget, at most ``FIRST_DFS_NODES`` positions), which finds
    easy wins at once and proves small losses; then, with what is left, the model's own
    search (``_search``)."""
    piles = encoded(model, piles)
    if (
        getattr(model, "score", None) is None
        and not getattr(model, "scores", ())
        and not getattr(model, "lds", False)
        and (getattr(model, "price", None) is None)
    ):
        return dfs(model, piles, redeals, budget)  # the model's own search is the plain one
    quick = min(FIRST_DFS_NODES, int(budget.nodes * FIRST_DFS_SHARE))
    return _in_turn(dfs, quick, _search, model, piles, redeals, budget)


def _search(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """The model's own search: best-first for models with a ``score`` (one best-first search
    after another, each with an equal share of what is left, for models with several
    ``scores``: see ``_scores_in_turn``), the priced discrepancy
    search for models with a ``price``; for models that ask for it (``lds = True``), first a
    limited-discrepancy search with a share of the node budget (``lds_share``, default half),
    then the exhaustive depth-first search with what is left, if anything (a loss is proved
    by the depth-first search, or by a discrepancy round that pruned nothing)."""
    scores: Sequence[Callable[[Piles], int]] = getattr(model, "scores", ())
    if scores:
        return _scores_in_turn(scores, model, piles, redeals, budget)
    if getattr(model, "score", None) is not None:
        return best_first(model, piles, redeals, budget)
    if getattr(model, "price", None) is not None:
        return priced(model, piles, redeals, budget)
    if not getattr(model, "lds", False):
        return dfs(model, piles, redeals, budget)
    share: float = getattr(model, "lds_share", 0.5)
    return _in_turn(lds, int(budget.nodes * share), dfs, model, piles, redeals, budget)


Search = Callable[[Model, Piles, int, Budget], Result]


def _scores_in_turn(
    scores: Sequence[Callable[[Piles], int]],
    model: Model,
    piles: Piles,
    redeals: int,
    budget: Budget,
) -> Result:
    """A best-first search on each score in turn, each with an equal share of the positions
    left, until one decides. Each search is complete on its own (a loss is proved by any of
    them that enters every reachable position), so the answer is as sound as one search's;
    only which wins are found within the budget depends on the scores. Why several: a
    best-first search spends its budget on the positions its score prefers, and scores that
    weigh the waste differently get stuck on different deals (Quadrangle: issue #22, in
    bench/RESULTS.md). The result counts every search's work."""
    nodes = generated = 0
    last = Result(Outcome.UNKNOWN)
    for i, score in enumerate(scores):
        share = (budget.nodes - nodes) // (len(scores) - i)
        last = best_first(
            model,
            piles,
            redeals,
            Budget(share, budget.out_of_time, budget.check_every),
            score=score,
        )
        nodes += last.nodes
        generated += last.generated
        if last.outcome is not Outcome.UNKNOWN or last.out_of_time or nodes >= budget.nodes:
            break
    return Result(last.outcome, last.moves, nodes, generated, last.out_of_time, last.path)


def _in_turn(
    first_search: Search,
    first_nodes: int,
    then: Search,
    model: Model,
    piles: Piles,
    redeals: int,
    budget: Budget,
) -> Result:
    """``first_search`` with ``first_nodes`` of the budget; if it decided nothing and time and
    positions are left, ``then`` with the rest. The result counts both searches' work."""
    first = first_search(
        model, piles, redeals, Budget(first_nodes, budget.out_of_time, budget.check_every)
    )
    if first.outcome is not Outcome.UNKNOWN or first.out_of_time or first.nodes >= budget.nodes:
        return first
    rest = then(
        model,
        piles,
        redeals,
        Budget(budget.nodes - first.nodes, budget.out_of_time, budget.check_every),
    )
    return Result(
        rest.outcome,
        rest.moves,
        first.nodes + rest.nodes,
        first.generated + rest.generated,
        rest.out_of_time,
        rest.path,
    )


def solve_state(model: Model, state: State, budget: Budget, *, short: bool = True) -> Result:
    """Solve an engine state with every card known; a winning line comes back as engine moves."""
    result = solve_piles(model, state.piles, state.redeals, budget)
    if result.outcome is not Outcome.WINNABLE:
        return result
    path = result.path
    if short and path:
        path = shorten(model, state.piles, state.redeals, path)
    return Result(
        result.outcome,
        to_moves(model, path),
        result.nodes,
        result.generated,
        result.out_of_time,
        path,
    )
