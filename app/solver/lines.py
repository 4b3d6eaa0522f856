"""A winning line: the positions it passes through, shortened, and as engine moves."""

from __future__ import annotations

from collections.abc import Sequence

from app.engine import Move
from app.solver.position import Child, Model, Mv, Piles, encoded


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
