"""The search every game shares: depth-first over a game model's moves with a transposition
table, node budgets, an injected out-of-time check, and shortening of what it finds.

The search asks one question — can a won position be reached from this one? — so the
transposition table is simply the set of positions already entered: a position met again
(on the current path or in a branch already searched) cannot add a way to win. The answer is
*lost* only when every reachable position was searched within the budget, so it is a proof as
good as the model's dead-end rules and safe moves, each of which carries its proof in its
docstring. Anything cut short by a budget is *unknown*.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from heapq import heappop, heappush
from typing import Protocol

from app.engine import Move, Ruleset, State

# Engine piles are tuples of card faces. A model may search on another immutable form of them
# (Castle's End: ``bytes``; see ``encoded``), typed as this one.
Piles = tuple[tuple[int, ...], ...]
# One step of the search: (source pile index, target pile index, count), or several such
# triples run together when a model joins moves that only make sense together.
Mv = tuple[int, ...]
Child = tuple[Mv, Piles, int]  # the move, the piles after it, redeals used after it


class Outcome(StrEnum):
    WINNABLE = "winnable"
    LOST = "lost"
    UNKNOWN = "unknown"


class Model(Protocol):
    """A game as the search sees it: fast successors over ``State.piles``-shaped tuples."""

    slug: str
    pile_ids: tuple[str, ...]

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        """Moves worth trying, best first. A single child may be a proven safe move."""
        ...

    def key(self, piles: Piles, redeals: int) -> Hashable:
        """Equal for positions with the same future (e.g. piles that only trade places)."""
        ...

    def won(self, piles: Piles) -> bool: ...

    def dead(self, piles: Piles, redeals: int) -> bool:
        """True only where a proven rule says no win can follow."""
        ...


class Layout:
    """What every game's model starts from: where its piles are, and when the game is won."""

    def __init__(self, rules: Ruleset) -> None:
        self.slug = rules.slug
        self.pile_ids = rules.pile_ids
        self.stock, self.waste = rules.stock, rules.waste
        self.f = rules.foundations
        self.t = rules.tableau
        self.r = rules.reserves
        # Every card is on a foundation when no other pile holds one.
        self.rest = tuple(i for i in range(len(rules.pile_ids)) if i not in rules.foundations)

    def won(self, piles: Piles) -> bool:
        return not any(piles[i] for i in self.rest)

    @staticmethod
    def span(indices: tuple[int, ...]) -> slice:
        """Piles that lie side by side as one slice (taken in one call where every position
        needs them)."""
        if not indices or indices != tuple(range(indices[0], indices[-1] + 1)):
            raise ValueError(f"the piles {indices} are not contiguous")
        return slice(indices[0], indices[-1] + 1)


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may spend: positions entered, and an optional out-of-time check.

    ``out_of_time`` is called every ``check_every`` positions; the caller decides what time
    means (the solver itself reads no clock).
    """

    nodes: int = 200_000
    out_of_time: Callable[[], bool] | None = None
    check_every: int = 1024


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    moves: tuple[Move, ...] = ()  # a winning line from the given position (winnable only)
    nodes: int = 0  # positions entered
    generated: int = 0  # positions produced by the move generator
    out_of_time: bool = False
    path: tuple[Mv, ...] = field(default=(), repr=False)


def encoded(model: Model, piles: Piles) -> Piles:
    """``piles`` in the form the model searches on: a model may keep its piles in another
    immutable form (``encode``; idempotent), which its moves, keys and paths all accept."""
    encode = getattr(model, "encode", None)
    return piles if encode is None else encode(piles)


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
        and not getattr(model, "lds", False)
        and (getattr(model, "price", None) is None)
    ):
        return _dfs(model, piles, redeals, budget)  # the model's own search is the plain one
    quick = min(FIRST_DFS_NODES, int(budget.nodes * FIRST_DFS_SHARE))
    return _in_turn(_dfs, quick, _search, model, piles, redeals, budget)


def _search(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """The model's own search: best-first for models with a ``score``, the priced discrepancy
    search for models with a ``price``; for models that ask for it (``lds = True``), first a
    limited-discrepancy search with a share of the node budget (``lds_share``, default half),
    then the exhaustive depth-first search with what is left, if anything (a loss is proved
    by the depth-first search, or by a discrepancy round that pruned nothing)."""
    if getattr(model, "score", None) is not None:
        return _best_first(model, piles, redeals, budget)
    if getattr(model, "price", None) is not None:
        return _priced(model, piles, redeals, budget)
    if not getattr(model, "lds", False):
        return _dfs(model, piles, redeals, budget)
    share: float = getattr(model, "lds_share", 0.5)
    return _in_turn(_lds, int(budget.nodes * share), _dfs, model, piles, redeals, budget)


Search = Callable[[Model, Piles, int, Budget], Result]


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


def _best_first(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """Best-first search, for models with a ``score`` (higher: nearer a win): the position
    with the best score among those generated and not yet entered is entered next (ties: the
    newest). Every position reachable is entered unless a win ends the search first, so no
    win means a loss, exactly as for the depth-first search: only the order differs. A
    position's key is recorded when it is first generated, with the move that led there, so
    that a win's line can be read back."""
    if model.won(piles):
        return Result(Outcome.WINNABLE)
    key, children, won = model.key, model.children, model.won
    score: Callable[[Piles], int] = model.score  # type: ignore[attr-defined]
    dead = model.dead if getattr(model, "dead_ends", True) else None
    clock = budget.out_of_time
    every = max(1, budget.check_every)
    max_nodes = budget.nodes
    root = key(piles, redeals)
    parents: dict[Hashable, tuple[Hashable, Mv] | None] = {root: None}
    heap: list[tuple[int, int, Piles, int, Hashable]] = [(0, 0, piles, redeals, root)]
    nodes = generated = order = 0
    while heap:
        _, _, at, at_redeals, at_key = heappop(heap)
        nodes += 1
        spent = _spent(nodes, generated, max_nodes, clock, every)
        if spent is not None:
            return spent
        if dead is not None and dead(at, at_redeals):
            continue
        kids = children(at, at_redeals)
        generated += len(kids)
        for mv, child, child_redeals in kids:
            k = key(child, child_redeals)
            if k in parents:
                continue
            parents[k] = (at_key, mv)
            if won(child):
                line: list[Mv] = []
                link = parents[k]
                while link is not None:
                    at_key, step = link
                    line.append(step)
                    link = parents[at_key]
                line.reverse()
                return Result(Outcome.WINNABLE, nodes=nodes, generated=generated, path=tuple(line))
            order -= 1
            heappush(heap, (-score(child), order, child, child_redeals, k))
    return Result(Outcome.LOST, nodes=nodes, generated=generated)


# What a model passes from a position to a child in a priced search (``_priced``): any
# hashable note, None for none.
Note = Hashable | None
# A priced search's waiting position: piles, redeals, its parent's key (None: the root), the
# move from the parent, and the note it was given. Its own key is taken only when it is
# entered: most positions waiting at the higher costs never are.
_Entry = tuple[Piles, int, Hashable | None, Mv | None, Note]


def _every_move(move: Mv) -> bool:
    return True


def _priced(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """A discrepancy search for models that price their moves (``price(piles, redeals, kids,
    note)``: for each child, what choosing it costs and the note it carries on). Every
    position is entered once, at the lowest total cost of the lines found to it: all positions
    of cost d before any of cost d + 1, depth-first among those of one cost (a child of cost 0
    is entered next). Unlike the limited-discrepancy search, no round repeats the one before,
    and a model can make a choice that spans several moves cost once (the note carries it).
    Every child is kept at some cost, so every reachable position is entered unless a win
    ends the search first: no win means a loss, as for the depth-first search."""
    if model.won(piles):
        return Result(Outcome.WINNABLE)
    key, children, won = model.key, model.children, model.won
    price: Callable[[Piles, int, list[Child], Note], list[tuple[int, Note]]]
    price = model.price  # type: ignore[attr-defined]
    dead = model.dead if getattr(model, "dead_ends", True) else None
    # Moves after which the dead-end rules can newly hold (the model's ``may_end``; default:
    # every move): a position reached by another one is not tested again.
    can_die: Callable[[Mv], bool] = getattr(model, "may_end", _every_move)
    clock = budget.out_of_time
    every = max(1, budget.check_every)
    max_nodes = budget.nodes
    parents: dict[Hashable, tuple[Hashable | None, Mv | None]] = {}
    levels: list[list[_Entry]] = [[(piles, redeals, None, None, None)]]
    nodes = generated = 0
    cost = 0
    while cost < len(levels):
        todo = levels[cost]
        push = todo.append
        while todo:
            at, at_redeals, parent, move, note = todo.pop()
            at_key = key(at, at_redeals)
            if at_key in parents:
                continue  # entered already, at this cost or a lower one
            parents[at_key] = (parent, move)
            nodes += 1
            # (``_spent`` written out: this runs for every position entered)
            if nodes >= max_nodes:
                return Result(Outcome.UNKNOWN, nodes=nodes, generated=generated)
            if clock is not None and not nodes % every and clock():
                return Result(Outcome.UNKNOWN, nodes=nodes, generated=generated, out_of_time=True)
            if dead is not None and (move is None or can_die(move)) and dead(at, at_redeals):
                continue
            kids = children(at, at_redeals)
            generated += len(kids)
            priced = price(at, at_redeals, kids, note)
            # Pushed last child first, so that the first of the cheapest is entered next.
            for (mv, child, child_redeals), (extra, child_note) in zip(
                reversed(kids), reversed(priced)
            ):
                if won(child):
                    line: list[Mv] = [mv]
                    link: Hashable | None = at_key
                    while link is not None:
                        link, step = parents[link]
                        if step is not None:
                            line.append(step)
                    line.reverse()
                    return Result(
                        Outcome.WINNABLE, nodes=nodes, generated=generated, path=tuple(line)
                    )
                if extra:
                    at_cost = cost + extra
                    while len(levels) <= at_cost:
                        levels.append([])
                    levels[at_cost].append((child, child_redeals, at_key, mv, child_note))
                else:
                    push((child, child_redeals, at_key, mv, child_note))
        cost += 1
    return Result(Outcome.LOST, nodes=nodes, generated=generated)


def _lds(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """Limited-discrepancy search: rounds of depth-first search in which the line may leave
    the model's first choice at most ``d`` times, for d = 0, 1, 2, … A round that never had to
    cut a line short has searched everything: then no win means a loss."""
    if model.won(piles):
        return Result(Outcome.WINNABLE)
    key, children, won = model.key, model.children, model.won
    dead = model.dead if getattr(model, "dead_ends", True) else None
    clock = budget.out_of_time
    every = max(1, budget.check_every)
    nodes = generated = 0
    if dead is not None and dead(piles, redeals):
        return Result(Outcome.LOST, nodes=1)
    for allowed in range(10_000):
        best: dict[Hashable, int] = {key(piles, redeals): allowed}
        cut = False
        first = children(piles, redeals)
        generated += len(first)
        stack: list[tuple[list[Child], int, int]] = [(first, 0, allowed)]
        path: list[Mv] = []
        while stack:
            kids, i, left = stack[-1]
            if i >= len(kids):
                stack.pop()
                if path:
                    path.pop()
                continue
            stack[-1] = (kids, i + 1, left)
            spend = left - (1 if i else 0)
            if spend < 0:
                cut = True
                continue
            mv, child, child_redeals = kids[i]
            if won(child):
                path.append(mv)
                return Result(Outcome.WINNABLE, nodes=nodes, generated=generated, path=(*path,))
            k = key(child, child_redeals)
            if best.get(k, -1) >= spend:
                continue
            best[k] = spend
            nodes += 1
            spent = _spent(nodes, generated, budget.nodes, clock, every)
            if spent is not None:
                return spent
            if dead is not None and dead(child, child_redeals):
                continue
            grand = children(child, child_redeals)
            generated += len(grand)
            path.append(mv)
            stack.append((grand, 0, spend))
        if not cut:
            return Result(Outcome.LOST, nodes=nodes, generated=generated)
    return Result(Outcome.UNKNOWN, nodes=nodes, generated=generated)


def _dfs(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
    """Depth-first search from one position; see the module docstring."""
    seen: set[Hashable] = set()
    if model.won(piles):
        return Result(Outcome.WINNABLE)
    key = model.key
    children = model.children
    dead = model.dead if getattr(model, "dead_ends", True) else None
    won = model.won
    max_nodes = budget.nodes
    clock = budget.out_of_time
    every = max(1, budget.check_every)
    seen.add(key(piles, redeals))
    nodes, generated = 1, 0
    if dead is not None and dead(piles, redeals):
        return Result(Outcome.LOST, nodes=1)
    # Each frame: the children of one position still to try, and the move that led to it.
    first = children(piles, redeals)
    generated += len(first)
    stack: list[tuple[list[Child], int]] = [(first, 0)]
    path: list[Mv] = []
    while stack:
        kids, i = stack[-1]
        if i >= len(kids):
            stack.pop()
            if path:
                path.pop()
            continue
        stack[-1] = (kids, i + 1)
        mv, child, child_redeals = kids[i]
        if won(child):
            path.append(mv)
            return Result(Outcome.WINNABLE, nodes=nodes, generated=generated, path=tuple(path))
        k = key(child, child_redeals)
        if k in seen:
            continue
        seen.add(k)
        nodes += 1
        spent = _spent(nodes, generated, max_nodes, clock, every)
        if spent is not None:
            return spent
        if dead is not None and dead(child, child_redeals):
            continue
        grand = children(child, child_redeals)
        generated += len(grand)
        path.append(mv)
        stack.append((grand, 0))
    return Result(Outcome.LOST, nodes=nodes, generated=generated)


def _spent(
    nodes: int, generated: int, max_nodes: int, clock: Callable[[], bool] | None, every: int
) -> Result | None:
    """An "unknown" once the node budget is spent, or the clock (read every ``every`` nodes)
    says the time is up; None while the search may go on."""
    if nodes >= max_nodes:
        return Result(Outcome.UNKNOWN, nodes=nodes, generated=generated)
    if clock is not None and nodes % every == 0 and clock():
        return Result(Outcome.UNKNOWN, nodes=nodes, generated=generated, out_of_time=True)
    return None


def line_positions(
    model: Model, piles: Piles, redeals: int, path: Sequence[Mv]
) -> list[tuple[Piles, int]]:
    """The positions a line of model moves passes through, start included."""
    piles = encoded(model, piles)
    out = [(piles, redeals)]
    for mv in path:
        for cmv, cpiles, cred in _all_children(model, piles, redeals):
            if cmv == mv:
                piles, redeals = cpiles, cred
                break
        else:
            raise ValueError(f"move {mv} is not offered in this position")
        out.append((piles, redeals))
    return out


def shorten(
    model: Model, piles: Piles, redeals: int, path: Sequence[Mv], *, drop_limit: int = 300
) -> tuple[Mv, ...]:
    """Shorten a winning line.

    First shortcuts: wherever a later position of the line (exactly that position, or any won
    one) can be reached in one move from an earlier one, jump there, dropping the moves in
    between — moves that cancel out, detours and wandering; repeated until nothing changes.
    Then, for lines of at most ``drop_limit`` moves, each single move is dropped in turn if the
    rest of the line is still legal and still wins.
    """
    piles = encoded(model, piles)
    current = _shortcut(model, piles, redeals, tuple(path))
    if len(current) > drop_limit:
        return current
    n = 0
    while n < len(current):
        trial = current[:n] + current[n + 1 :]
        if _wins(model, piles, redeals, trial):
            current = _shortcut(model, piles, redeals, trial)
        else:
            n += 1
    return current


def _wins(model: Model, piles: Piles, redeals: int, path: Sequence[Mv]) -> bool:
    try:
        end, _ = line_positions(model, piles, redeals, path)[-1]
    except ValueError:
        return False
    return model.won(end)


def _shortcut(model: Model, piles: Piles, redeals: int, path: tuple[Mv, ...]) -> tuple[Mv, ...]:
    """Greedy jumps by canonical key: from each position of the new line, take the move whose
    result has the same key as the latest position of the old line (or is won). Positions of
    equal key have the same future up to which pile is which, so the old line can always be
    followed on from there; if a model ever broke that, the old line is kept."""
    current = path
    key = model.key
    while True:
        positions = line_positions(model, piles, redeals, current)
        index = {key(p, r): n for n, (p, r) in enumerate(positions)}
        last = len(current)
        out: list[Mv] = []
        p, r, n = piles, redeals, 0
        while n < last:
            best, best_child = -1, None
            for mv, cp, cr in _all_children(model, p, r):
                if model.won(cp):
                    best, best_child = last, (mv, cp, cr)
                    break
                j = index.get(key(cp, cr), -1)
                if j > best:
                    best, best_child = j, (mv, cp, cr)
            if best <= n or best_child is None:
                return path  # the model broke the symmetry the jumps rely on
            mv, p, r = best_child
            out.append(mv)
            n = best
        if len(out) >= len(current):
            return current
        current = tuple(out)


def _all_children(model: Model, piles: Piles, redeals: int) -> list[Child]:
    every = getattr(model, "all_children", None)
    if every is not None:
        result: list[Child] = every(piles, redeals)
        return result
    return model.children(piles, redeals)


def to_moves(model: Model, path: Sequence[Mv]) -> tuple[Move, ...]:
    ids = model.pile_ids
    return tuple(
        Move(ids[step[i]], ids[step[i + 1]], step[i + 2])
        for step in path
        for i in range(0, len(step), 3)
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
