"""Hints that never use a card the player cannot see, and that lead somewhere.

- **Nothing hidden** (Castle's End always; the other games once no face-down card is left and
  the stock is empty or has been turned over at least once — a redeal needs an empty stock,
  so every card then in the stock has been seen face up, in that order): the hint is exact,
  the first move of a winning line, or "this position can no longer be won". The whole line
  comes back with it (``Hint.line``): the services keep it with the game and continue it while
  the player follows it (``follow``), so following hint after hint wins and never cycles.
- **Cards hidden**: the hidden cards are first replaced by the same cards in a fixed order
  (``visible_only``), so nothing below can depend on where they really are. Then ``samples``
  arrangements of those cards are drawn with a generator seeded from that visible position
  only (``sample_seed``), each arrangement is searched with every card known, and the hint is
  the move that starts the most wins among them (dealing and redealing are moves like any
  other), with ``chance`` the share of arrangements the search won. When no arrangement is
  won within the budget the hint still names a move: the first of the shortest line of
  visible moves that makes the most progress (cards on the foundations, face-down cards
  turned over, empty tableau piles: ``_progress``), else (no redeal) the waste's card onto a
  tableau pile, else a deal, else the search model's first choice. There is no move only
  when no legal move exists.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from app.engine import IllegalMove, Move, ShareRef, State, Words, dumps, get_ruleset
from app.solver.lines import shorten, to_moves
from app.solver.models import model_for
from app.solver.position import Mv, Piles, encoded
from app.solver.result import Budget, Outcome
from app.solver.sampling import arrangements, fully_visible, stock_hidden, visible_only
from app.solver.search import solve_piles, solve_state

ESTIMATE: Literal["estimate"] = "estimate"
# Arrangements of the hidden cards searched for one hint (the node budget is shared out).
SAMPLES = 8
# What a line of visible moves gains when no arrangement is won (``_progress``): a card put on
# a foundation, a face-down card turned over (Quadruple Interchange: these lines are what move
# its game forward; before they counted, hint-led games dealt the stock out past every
# face-down card: bench/RESULTS.md), an empty tableau pile. Turning a card over is worth an
# empty pile. Only Quadruple Interchange has face-down cards, and in the other games a tableau
# pile or reserve can stay empty only once the stock is empty (nothing is hidden then, and
# hints are exact): the weights change nothing there.
HOME, TURNED, EMPTY = 2, 2, 1


def N_(message: str) -> str:
    """Marks a hint's message for the catalogs (the web says it in the player's language)."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a singular and a plural message as one message of the catalogs (ngettext)."""
    return singular, plural


@dataclass(frozen=True, slots=True)
class Hint:
    move: Move | None
    outcome: Outcome | Literal["estimate"]
    exact: bool  # True: nothing is hidden and the outcome is the solver's answer
    message: str
    # Exact and winnable: the winning line found, ``move`` first (kept with the game).
    line: tuple[Move, ...] = ()
    # Estimates: the share of the sampled arrangements of the hidden cards the search won.
    chance: float | None = None
    samples: int = 0
    # A message built from numbers, as data (codes and parameters, app/engine/reasons.py), for
    # the web to say in the player's language; ``message`` is their English. Empty: the
    # message is a fixed catalog message.
    words: tuple[Words, ...] = ()


def _said(*words: Words) -> str:
    return " ".join(str(w) for w in words)


def hint(state: State, budget: Budget | None = None, *, samples: int = SAMPLES) -> Hint:
    budget = budget or Budget(nodes=50_000)
    if fully_visible(state):
        return _exact(state, budget)
    return _estimate(state, budget, samples)


def follow(start: State, line: Sequence[Move], state: State) -> tuple[Move, ...] | None:
    """The rest of a kept winning line from ``state``, if ``state`` is one of the positions the
    line passes through from ``start`` (before its end); None when the player has left it."""
    rules = get_ruleset(start.game)
    if start.game != state.game:
        return None
    at = start
    for i, move in enumerate(line):
        if at == state:
            return tuple(line[i:])
        try:
            at = rules.apply(at, move)
        except IllegalMove:
            return None
    return None


def _exact(state: State, budget: Budget) -> Hint:
    model = model_for(state.game)
    result = solve_state(model, state, budget, short=False)
    if result.outcome is Outcome.WINNABLE:
        if not result.moves:
            return Hint(None, Outcome.WINNABLE, True, N_("This game is already won."))
        line = _short_line(state, result.moves, result.path)
        return Hint(
            line[0],
            Outcome.WINNABLE,
            True,
            N_("This position can be won: try this move."),
            line=line,
        )
    if result.outcome is Outcome.LOST:
        return Hint(None, Outcome.LOST, True, N_("This position can no longer be won."))
    return Hint(
        None,
        Outcome.UNKNOWN,
        False,
        N_("The solver could not decide this position within its time: no hint this time."),
    )


def _short_line(state: State, moves: tuple[Move, ...], path: Sequence[Mv]) -> tuple[Move, ...]:
    """The line with its detours cut out (``shorten``'s shortcuts only: cheap; Castle's End
    deal 8's first line of 2,584 moves becomes 231, under the game's move cap), if it still
    wins through the engine; else the line as found. The hint given is the kept line's first
    move either way."""
    model = model_for(state.game)
    rules = get_ruleset(state.game)
    try:
        short = to_moves(model, shorten(model, state.piles, state.redeals, path, drop_limit=0))
        if short and rules.is_won(rules.replay(state, short)):
            return short
    except (IllegalMove, ValueError):
        pass
    return moves


def _estimate(state: State, budget: Budget, samples: int) -> Hint:
    """A hint from sampled arrangements of the hidden cards (see the module docstring)."""
    rules = get_ruleset(state.game)
    legal = rules.legal_moves(state)  # public: legality depends on visible cards only
    if not legal:
        return Hint(None, ESTIMATE, False, N_("No legal move is left."), chance=0.0)
    legal = _onward(visible_only(state), legal)
    model = model_for(state.game)
    samples = max(1, samples)
    each = max(1, budget.nodes // samples)
    votes: Counter[Move] = Counter()
    won = searched = 0
    for arrangement in arrangements(state, samples):
        if searched and budget.out_of_time is not None and budget.out_of_time():
            break  # out of time: the arrangements searched so far answer
        result = solve_piles(
            model,
            arrangement.piles,
            arrangement.redeals,
            Budget(each, budget.out_of_time, budget.check_every),
        )
        searched += 1
        if result.outcome is Outcome.WINNABLE and result.path:
            won += 1
            first = to_moves(model, result.path[:1])[0]
            if first in legal:
                votes[first] += 1
    chance = won / searched
    forms = Nn_(
        "The chance is the share of %(n)s random arrangement of the cards you cannot see "
        "(each consistent with everything you have seen) in which the solver found a win; it "
        "never looks at where those cards really are.",
        "The chance is the share of %(n)s random arrangements of the cards you cannot see "
        "(each consistent with everything you have seen) in which the solver found a win; it "
        "never looks at where those cards really are.",
    )
    meaning = Words("estimate_samples", forms[0], {"n": searched}, forms[1], searched)
    if votes:
        best = max(votes.values())
        move = next(m for m in legal if votes[m] == best)
        won_said: tuple[Words, ...] = (
            Words(
                "estimate_chance",
                N_(
                    "Estimated chance of winning: %(chance)s. This move starts the most of "
                    "those wins."
                ),
                {"chance": ShareRef(chance)},
            ),
            meaning,
        )
        return Hint(
            move,
            ESTIMATE,
            False,
            _said(*won_said),
            chance=chance,
            samples=searched,
            words=won_said,
        )
    move, why = _fallback(state, legal)
    said = (
        Words(
            "estimate_no_win",
            N_(
                "Estimated chance of winning: %(chance)s (the solver found no win within its "
                "budget)."
            ),
            {"chance": ShareRef(chance)},
        ),
        why,
        meaning,
    )
    return Hint(move, ESTIMATE, False, _said(*said), chance=chance, samples=searched, words=said)


def _onward(masked: State, legal: list[Move]) -> list[Move]:
    """The legal moves without the *uphill* reversible ones: a move that the opposite move
    undoes at once (a card traded between two piles) is offered only towards the position
    that comes first in a fixed order of visible positions. Guesses of two neighbouring
    positions can then never send a card back and forth: of A → B and B → A only one is
    downhill. Computed on the visible position only (``masked``); a move that shows a hidden
    card is never reversible."""
    rules = get_ruleset(masked.game)
    here = dumps(masked)
    out: list[Move] = []
    for move in legal:
        after = rules.apply(masked, move)
        back = Move(move.target, move.source, move.count)
        reversible = back in rules.legal_moves(after) and rules.apply(after, back) == masked
        if reversible and dumps(after) > here:
            continue  # uphill
        out.append(move)
    return out or legal


def _fallback(state: State, legal: list[Move]) -> tuple[Move, Words]:
    """A move when no sampled arrangement was won: the start of the shortest visible line that
    puts the most cards on the foundations, else (in a game with no redeal) the waste's card
    onto a tableau pile, else a deal or redeal, else the search model's first choice, else the
    first legal move."""
    rules = get_ruleset(state.game)
    # Moves off a foundation (Patriarchs' transfers) only when nothing else is legal: two
    # guesses in a row would otherwise trade a card back and forth for ever.
    onward = [m for m in legal if rules.pile_index(m.source) not in rules.foundations]
    legal = onward or legal
    given = _visible(state, Budget(nodes=5_000), legal)
    if given.move is not None and given.move in legal:
        if given.words and given.words[0].n > 0:  # the line puts cards home
            return given.move, Words(
                "guess_line", N_("This move starts the shortest line that puts more cards home.")
            )
        return given.move, Words(
            "guess_turn",
            N_(
                "This move starts the shortest line that turns a face-down card over or "
                "empties a pile."
            ),
        )
    if rules.max_redeals is None and rules.waste >= 0:
        # No redeal (Quadrangle, Quadruple Interchange): a deal covers the waste's top card for
        # good, so first keep it in play on a tableau pile, as a greedy player would (dealing
        # first lost Quadrangle deals that greedy play wins: bench/RESULTS.md). A card never
        # goes back to the waste, so this never goes round in circles.
        for move in legal:
            if (
                rules.pile_index(move.source) == rules.waste
                and rules.pile_index(move.target) in rules.tableau
            ):
                return move, Words(
                    "guess_waste",
                    N_("This keeps the waste's card in play before the next deal covers it."),
                )
    # Nothing shows a way home: deal (or redeal). The stock only shrinks and redeals are
    # limited, so guesses like this never go round in circles.
    for move in legal:
        if move.source == "stock" or move.target == "stock":
            return move, Words(
                "guess_deal", N_("Nothing you can see leads home: deal from the stock.")
            )
    model = model_for(state.game)
    masked = visible_only(state)
    for mv, _, _ in model.children(encoded(model, masked.piles), masked.redeals):
        first = to_moves(model, [mv[:3]])[0]
        if first in legal:
            return first, Words(
                "guess_first_choice", N_("This is the solver's first choice from what you can see.")
            )
    return legal[0], Words("guess_legal", N_("This is a legal move; nothing better shows."))


def _progress(home: int, face_down: int, empty: int) -> int:
    """A visible position's progress (see ``HOME``): higher is further on. A hint from
    ``_visible`` heads for a position of more progress by the shortest line; the next one
    finds that position (or one as far on) nearer, so hints like these do not go round in
    circles. A hint-led game can still repeat itself once no visible line makes progress, the
    stock is dealt out and cards are still face down: it is stuck then (bench/RESULTS.md)."""
    return HOME * home - TURNED * face_down + EMPTY * empty


def _visible(state: State, budget: Budget, starts: Sequence[Move] | None = None) -> Hint:
    """The first move of the shortest line of visible moves (no deal, no card turned over on
    the way: a line ends where it shows a card) to the position of most ``_progress``; no move
    when no line makes progress. Its words count the cards the line puts home. ``starts``: the
    moves a line may start with (``_onward``'s: a line that starts uphill would be refused)."""
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

    def progress(piles: Piles) -> int:
        return _progress(
            on_foundations(piles), face_down(piles), sum(1 for t in tableau if not piles[t])
        )

    tableau = rules.tableau
    start_piles, start_redeals = encoded(model, masked.piles), masked.redeals
    start_key = model.key(start_piles, start_redeals)
    parents: dict[Hashable, tuple[Hashable, Mv] | None] = {start_key: None}
    best_key, best_score, best_piles = start_key, progress(start_piles), start_piles
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
            if starts is not None and key == start_key and to_moves(model, [mv])[0] not in starts:
                continue
            parents[k] = (key, mv)
            score = progress(cp)
            if score > best_score:
                best_key, best_score, best_piles = k, score, cp
            shows = (hide_stock and len(cp[stock]) < len(piles[stock])) or face_down(cp) < down
            if not shows:
                queue.append((cp, cr, k))
    if best_key == start_key:
        return Hint(
            None,
            Outcome.UNKNOWN,
            False,
            N_(
                "No hint: from the cards you can see, no line of play puts another card on a "
                "foundation (cards you cannot see are never used for hints)."
            ),
        )
    line: list[Mv] = []
    at: Hashable = best_key
    while (link := parents[at]) is not None:
        at, mv = link
        line.append(mv)
    first = to_moves(model, [line[-1]])[0]
    gained = on_foundations(best_piles) - on_foundations(start_piles)
    forms = Nn_(
        "From the cards you can see, this move starts the shortest line that puts %(n)s more "
        "card on the foundations. Whether the deal can still be won depends on cards you "
        "cannot see.",
        "From the cards you can see, this move starts the shortest line that puts %(n)s more "
        "cards on the foundations. Whether the deal can still be won depends on cards you "
        "cannot see.",
    )
    said = Words("visible_line", forms[0], {"n": gained}, forms[1], gained)
    return Hint(first, Outcome.UNKNOWN, False, _said(said), words=(said,))
