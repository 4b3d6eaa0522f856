"""Hints that never use a card the player cannot see.

- **Nothing hidden** (Castle's End always; the other games once no face-down card is left and
  the stock is empty or has been turned over at least once — a redeal needs an empty stock,
  so every card then in the stock has been seen face up, in that order): the hint is exact,
  the first move of a winning line, or "this position can no longer be won".
- **Cards hidden**: the hidden cards are first replaced by the same cards in a fixed order
  (``visible_only``), so nothing below can depend on where they really are. A breadth-first
  search then follows only moves that show no hidden card; a move that does show one (a deal,
  a refill from the stock, a card turning up) ends its line, counted for what it visibly
  achieves. The hint is the first move of the shortest line that puts the most cards on the
  foundations; when no line adds any, there is no hint, and the hint says so.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass

from app.engine import Move, State, get_ruleset
from app.solver.models import model_for
from app.solver.search import Budget, Mv, Outcome, Piles, encoded, solve_state, to_moves


@dataclass(frozen=True, slots=True)
class Hint:
    move: Move | None
    outcome: Outcome
    exact: bool  # True: nothing is hidden and the outcome is the solver's answer
    message: str


def stock_hidden(state: State) -> bool:
    rules = get_ruleset(state.game)
    return rules.stock >= 0 and bool(state.piles[rules.stock]) and state.redeals == 0


def fully_visible(state: State) -> bool:
    """True when the player has seen every card of the position where it now lies."""
    if any(c < 0 for pile in state.piles for c in pile):
        return False
    return not stock_hidden(state)


def visible_only(state: State) -> State:
    """``state`` with its hidden cards (face-down ones, and the stock while it is hidden) put
    back in a fixed order: sorted, face-down places first in pile order, then the stock.

    Which cards are hidden is known to the player (every card not in sight); where each one
    lies is not. Anything computed from this state depends only on what the player sees.
    """
    rules = get_ruleset(state.game)
    hide_stock = stock_hidden(state)
    hidden = sorted(
        [~c for pile in state.piles for c in pile if c < 0]
        + (list(state.piles[rules.stock]) if hide_stock else [])
    )
    it = iter(hidden)
    piles: list[tuple[int, ...]] = []
    for i, pile in enumerate(state.piles):
        if i == rules.stock and hide_stock:
            piles.append(pile)  # filled below, after every face-down place
        else:
            piles.append(tuple(~next(it) if c < 0 else c for c in pile))
    if hide_stock:
        piles[rules.stock] = tuple(it)
    return State(state.game, tuple(piles), state.redeals)


def hint(state: State, budget: Budget | None = None) -> Hint:
    budget = budget or Budget(nodes=50_000)
    if fully_visible(state):
        return _exact(state, budget)
    return _visible(state, budget)


def _exact(state: State, budget: Budget) -> Hint:
    result = solve_state(model_for(state.game), state, budget, short=False)
    if result.outcome is Outcome.WINNABLE:
        if not result.moves:
            return Hint(None, Outcome.WINNABLE, True, "This game is already won.")
        return Hint(
            result.moves[0], Outcome.WINNABLE, True, "This position can be won: try this move."
        )
    if result.outcome is Outcome.LOST:
        return Hint(None, Outcome.LOST, True, "This position can no longer be won.")
    return Hint(
        None,
        Outcome.UNKNOWN,
        False,
        "The solver could not decide this position within its time: no hint this time.",
    )


def _visible(state: State, budget: Budget) -> Hint:
    model = model_for(state.game)
    rules = get_ruleset(state.game)
    masked = visible_only(state)
    stock = rules.stock
    foundations = rules.foundations
    hide_stock = stock_hidden(state)

    def on_foundations(piles: Piles) -> int:
        return sum(len(piles[f]) for f in foundations)

    def face_down(piles: Piles) -> int:
        return sum(1 for pile in piles for c in pile if c < 0)

    start_piles, start_redeals = encoded(model, masked.piles), masked.redeals
    start_key = model.key(start_piles, start_redeals)
    parents: dict[Hashable, tuple[Hashable, Mv] | None] = {start_key: None}
    best_key, best_score = start_key, on_foundations(start_piles)
    queue = deque([(start_piles, start_redeals, start_key)])
    nodes = 0
    while queue and nodes < budget.nodes:
        piles, redeals, key = queue.popleft()
        nodes += 1
        down = face_down(piles)
        for mv, cp, cr in model.children(piles, redeals):
            k = model.key(cp, cr)
            if k in parents:
                continue
            parents[k] = (key, mv)
            score = on_foundations(cp)
            if score > best_score:
                best_key, best_score = k, score
            shows = (hide_stock and len(cp[stock]) < len(piles[stock])) or face_down(cp) < down
            if not shows:
                queue.append((cp, cr, k))
    if best_key == start_key:
        return Hint(
            None,
            Outcome.UNKNOWN,
            False,
            "No hint: from the cards you can see, no line of play puts another card on a "
            "foundation (cards you cannot see are never used for hints).",
        )
    line: list[Mv] = []
    at: Hashable = best_key
    while (link := parents[at]) is not None:
        at, mv = link
        line.append(mv)
    first = to_moves(model, [line[-1]])[0]
    gained = best_score - on_foundations(start_piles)
    cards = "card" if gained == 1 else "cards"
    return Hint(
        first,
        Outcome.UNKNOWN,
        False,
        f"From the cards you can see, this move starts the shortest line that puts {gained} "
        f"more {cards} on the foundations. Whether the deal can still be won depends on cards "
        "you cannot see.",
    )
