"""The solver: pure standard library, beside the engine, used by the services only.

``solve(state, budget)`` answers whether a position can be won with every card known (with a
winning line), is lost (proved), or is unknown within the budget. ``hint(state, budget)``
answers what a player may be told: exact where nothing is hidden, otherwise only what follows
from the cards the player can see.
"""

from app.engine import State
from app.solver.hints import ESTIMATE, Hint, follow, hint
from app.solver.lines import shorten
from app.solver.models import model_for
from app.solver.result import Budget, Outcome, Result
from app.solver.sampling import arrangements, visible_only
from app.solver.search import solve_piles, solve_state


def solve(state: State, budget: Budget | None = None, *, short: bool = True) -> Result:
    """Solve ``state`` with every card known (stock order and face-down cards included)."""
    return solve_state(model_for(state.game), state, budget or Budget(), short=short)


__all__ = [
    "ESTIMATE",
    "Budget",
    "Hint",
    "Outcome",
    "Result",
    "arrangements",
    "follow",
    "hint",
    "model_for",
    "shorten",
    "solve",
    "solve_piles",
    "visible_only",
]
