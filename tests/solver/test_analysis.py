"""Where a finished game slipped (app/solver/analysis.py, the coach of issue #22): the first
move after which the deal could no longer be won, held to exhaustive search."""

from __future__ import annotations

from app.engine import Move, State, get_ruleset
from app.solver import Budget, solve
from app.solver.analysis import analyse


def exhaustive(state: State) -> bool:
    """Whether ``state`` can be won, by plain exhaustive search through the engine (small
    positions only): the check the analysis is held to."""
    rules = get_ruleset(state.game)
    seen = {state}
    stack = [state]
    while stack:
        at = stack.pop()
        if rules.is_won(at):
            return True
        for move in rules.legal_moves(at):
            child = rules.apply(at, move)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return False


def late_position(game: str, number: int, left: int) -> State:
    """A deal played along a winning line until ``left`` cards are off the foundations: a
    small position (its redeals used up), still winnable."""
    rules = get_ruleset(game)
    state = rules.deal(number)
    line = solve(state, Budget(nodes=300_000)).moves
    assert line
    for move in line:
        if rules.cards - rules.on_foundations(state) <= left:
            break
        state = rules.apply(state, move)
    return state


def careless_walk(start: State, seed: int, length: int) -> list[Move]:
    """A deterministic walk of ``length`` moves from ``start`` that deals and redeals more
    than it should (so that it sometimes loses a winnable position)."""
    rules = get_ruleset(start.game)
    state, moves = start, []
    for i in range(length):
        legal = rules.legal_moves(state)
        if not legal:
            break
        stock = [m for m in legal if m.target in ("waste", "stock")] or legal
        move = (
            stock[(seed + i) % len(stock)] if (seed + i) % 3 else legal[(seed * 5 + i) % len(legal)]
        )
        moves.append(move)
        state = rules.apply(state, move)
    return moves


def test_the_slip_named_is_the_first_move_after_which_the_position_is_lost() -> None:
    """Corners endgames (22 cards left, every redeal used): small enough for the plain
    exhaustive search to settle every position of each walk."""
    rules = get_ruleset("corners")
    checked = 0
    for number in (1, 2):
        start = late_position("corners", number, 22)
        assert exhaustive(start)
        for seed in range(6):
            moves = careless_walk(start, seed, 12)
            positions = [start]
            for m in moves:
                positions.append(rules.apply(positions[-1], m))
            truth = [exhaustive(p) for p in positions]
            found = analyse(start, moves, Budget(nodes=200_000))
            assert found.decided and found.deal_winnable is True
            if all(truth):
                assert found.slip is None
                continue
            first_lost = truth.index(False)
            assert found.slip is not None
            assert found.slip.ply == first_lost
            assert found.slip.move == moves[first_lost - 1]
            before = positions[first_lost - 1]
            assert found.slip.better in rules.legal_moves(before)
            assert exhaustive(rules.apply(before, found.slip.better))
            checked += 1
    assert checked >= 6  # the walks do lose


def test_a_won_game_and_a_lost_deal_have_no_slip() -> None:
    rules = get_ruleset("castles-end")
    won_deal = rules.deal(1)
    line = solve(won_deal, Budget(nodes=200_000)).moves
    found = analyse(won_deal, line, Budget(nodes=200_000))
    assert found.slip is None and found.deal_winnable is True and found.decided
    lost_deal = rules.deal(3)  # proved lost (tests/web/test_solver_routes.py)
    first = rules.legal_moves(lost_deal)[0]
    found = analyse(lost_deal, [first], Budget(nodes=200_000))
    assert found.slip is None and found.deal_winnable is False and found.decided


def test_an_analysis_cut_short_says_it_is_undecided() -> None:
    rules = get_ruleset("castles-end")
    deal = rules.deal(1)
    found = analyse(deal, rules.legal_moves(deal)[:1], Budget(nodes=2))
    assert not found.decided and found.slip is None
