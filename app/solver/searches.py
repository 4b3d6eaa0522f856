"""The searches a portfolio (app/solver/search.py) runs: depth-first, limited-discrepancy,
priced discrepancy and best-first, each over a game model's moves with its own transposition
bookkeeping, node budget and injected out-of-time check.

Each asks one question — can a won position be reached from this one? — so the transposition
table is simply the set of positions already entered: a position met again (on the current path
or in a branch already searched) cannot add a way to win. The answer is *lost* only when every
reachable position was searched within the budget, so it is a proof as good as the model's
dead-end rules and safe moves, each of which carries its proof in its docstring. Anything cut
short by a budget is *unknown*.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from heapq import heappop, heappush

from app.solver.position import Child, Model, Mv, Piles
from app.solver.result import Budget, Outcome, Result


def best_first(
    model: Model,
    piles: Piles,
    redeals: int,
    budget: Budget,
    score: Callable[[Piles], int] | None = None,
) -> Result:
    """Best-first search, for models with a ``score`` (higher: nearer a win; ``score`` given
    here replaces the model's): the position with the best score among those generated and
    not yet entered is entered next (ties: the newest). Every position reachable is entered
    unless a win ends the search first, so no win means a loss, exactly as for the
    depth-first search: only the order differs. A position's key is recorded when it is
    first generated, with the move that led there, so that a win's line can be read back."""
    if model.won(piles):
        return Result(Outcome.WINNABLE)
    key, children, won = model.key, model.children, model.won
    rank: Callable[[Piles], int] = score or model.score  # type: ignore[attr-defined]
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
                path = _line(parents, parents[k])
                return Result(Outcome.WINNABLE, nodes=nodes, generated=generated, path=path)
            order -= 1
            heappush(heap, (-rank(child), order, child, child_redeals, k))
    return Result(Outcome.LOST, nodes=nodes, generated=generated)


# What a model passes from a position to a child in a priced search (``priced``): any
# hashable note, None for none.
Note = Hashable | None
# A priced search's waiting position: piles, redeals, its parent's key (None: the root), the
# move from the parent, and the note it was given. Its own key is taken only when it is
# entered: most positions waiting at the higher costs never are.
_Entry = tuple[Piles, int, Hashable | None, Mv | None, Note]


def _line(
    parents: dict[Hashable, tuple[Hashable, Mv] | None], link: tuple[Hashable, Mv] | None
) -> tuple[Mv, ...]:
    """The moves from the root to the end of ``link`` (a position's parent and the move from
    it), following the parent links back."""
    line: list[Mv] = []
    while link is not None:
        at_key, step = link
        line.append(step)
        link = parents[at_key]
    line.reverse()
    return tuple(line)


def _every_move(move: Mv) -> bool:
    return True


def priced(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
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


def lds(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
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


def dfs(model: Model, piles: Piles, redeals: int, budget: Budget) -> Result:
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


# A layered search's rounds: each round's beam is ``LAYER_GROWTH`` times the one before.
LAYER_GROWTH = 2


def layered(
    model: Model,
    piles: Piles,
    redeals: int,
    budget: Budget,
    *,
    width: int = 16,
    per_position: int = 24,
    end_factor: int = 8,
    score: Callable[[Piles], int] | None = None,
) -> Result:
    """A beam search layered by the stock, for games with one pass through it (Quadruple
    Interchange): the positions with the same number of cards in the stock form a layer, and
    every line passes through the layers in order. In each layer a best-first search on the
    model's ``progress`` (``score`` given here replaces it), started from the layer's first
    positions and never dealing, enters at most ``width × per_position`` positions
    (``end_factor`` times that in the last layer, the stock dealt out); the ``width`` positions
    of best score that the deals from those positions reach start the next layer. Rounds of
    this run with the beam ``LAYER_GROWTH`` times wider each time until a win or the budget
    ends them. A round that cut nothing (every layer's search ran out of positions and no
    deal was left out of the next layer) entered every reachable position: then no win means
    a loss, as for the depth-first search; otherwise the answer is *unknown*."""
    if model.won(piles):
        return Result(Outcome.WINNABLE)
    nodes = generated = 0
    while True:
        found, complete, nodes, generated, out_of_time = _beam(
            model, piles, redeals, budget, width, per_position, end_factor, score, nodes, generated
        )
        if found is not None:
            return Result(Outcome.WINNABLE, nodes=nodes, generated=generated, path=found)
        if out_of_time or nodes >= budget.nodes:
            return Result(
                Outcome.UNKNOWN, nodes=nodes, generated=generated, out_of_time=out_of_time
            )
        if complete:
            return Result(Outcome.LOST, nodes=nodes, generated=generated)
        width *= LAYER_GROWTH


def _beam(
    model: Model,
    piles: Piles,
    redeals: int,
    budget: Budget,
    width: int,
    per_position: int,
    end_factor: int,
    score: Callable[[Piles], int] | None,
    nodes: int,
    generated: int,
) -> tuple[tuple[Mv, ...] | None, bool, int, int, bool]:
    """One round of ``layered``: (the winning line or None, whether nothing was cut, nodes,
    generated, out of time), the counts carried on from ``nodes`` and ``generated``."""
    key, children, won = model.key, model.children, model.won
    rank: Callable[[Piles], int] = score or model.progress  # type: ignore[attr-defined]
    stock: int = model.stock  # type: ignore[attr-defined]
    clock = budget.out_of_time
    every = max(1, budget.check_every)
    max_nodes = budget.nodes
    root = key(piles, redeals)
    parents: dict[Hashable, tuple[Hashable, Mv] | None] = {root: None}

    complete = True
    order = 0
    layer: list[tuple[Piles, int, Hashable]] = [(piles, redeals, root)]
    while layer:
        heap: list[tuple[int, int, Piles, int, Hashable]] = []
        for at, at_redeals, at_key in layer:
            order += 1
            heappush(heap, (-rank(at), order, at, at_redeals, at_key))
        deals: list[tuple[int, int, Piles, int, Hashable, Mv]] = []
        cap = width * per_position * (1 if layer[0][0][stock] else end_factor)
        entered = 0
        while heap and entered < cap:
            _, _, at, at_redeals, at_key = heappop(heap)
            entered += 1
            nodes += 1
            if nodes >= max_nodes:
                return None, False, nodes, generated, False
            if clock is not None and not nodes % every and clock():
                return None, False, nodes, generated, True
            kids = children(at, at_redeals)
            generated += len(kids)
            in_stock = len(at[stock])
            for mv, child, child_redeals in kids:
                if won(child):
                    return _line(parents, (at_key, mv)), False, nodes, generated, False
                order += 1
                if len(child[stock]) < in_stock:
                    deals.append((-rank(child), order, child, child_redeals, at_key, mv))
                    continue
                k = key(child, child_redeals)
                if k in parents:
                    continue
                parents[k] = (at_key, mv)
                heappush(heap, (-rank(child), order, child, child_redeals, k))
        if heap:
            complete = False
        deals.sort()
        layer = []
        for _, _, child, child_redeals, at_key, mv in deals:
            k = key(child, child_redeals)
            if k in parents:
                continue
            if len(layer) == width:
                complete = False
                break
            parents[k] = (at_key, mv)
            layer.append((child, child_redeals, k))
    return None, complete, nodes, generated, False
