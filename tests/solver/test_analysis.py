"""Where a finished game slipped (app/solver/analysis.py, the coach of issue #22): the first
move after which the deal could no longer be won, held to exhaustive search."""

from __future__ import annotations

from app.engine import Move, State, get_ruleset
from app.solver import Budget, Outcome, solve
from app.solver.analysis import Analysis, Slip, analyse
from tests.engine.builders import position


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


# A Corners ending in its last pass: ♣ wants Q♣, every other suit is home; the stock deals
# Q♣, then K♣. Dealing K♣ onto Q♣ buries it for good.
RANKS = "A23456789TJQK"
CLUBS_LEFT = {
    "f1": " ".join(r + "C" for r in RANKS[:11]),
    **{f"f{i + 2}": " ".join(r + s for r in RANKS) for i, s in enumerate("DHS")},
}
DEAL, HOME = Move("stock", "waste"), Move("waste", "f1")
SMALL = Budget(nodes=1_000)


def test_a_small_slip_is_named_with_the_move_that_would_have_kept_the_win() -> None:
    start = position("corners", CLUBS_LEFT, redeals=2, stock="KC QC")
    found = analyse(start, [DEAL, DEAL], SMALL)
    assert found == Analysis(True, Slip(2, DEAL, HOME), True, found.searches, False)
    assert 2 <= found.searches <= 3  # the deal, the end, and at most the one in between


def test_a_verdict_already_known_for_the_deal_saves_its_search() -> None:
    start = position("corners", CLUBS_LEFT, redeals=2, stock="KC QC")
    lost = analyse(start, [DEAL], SMALL, deal_outcome=Outcome.LOST)
    assert lost == Analysis(False, None, True, 0)  # taken as given: nothing searched
    known = analyse(start, [DEAL, DEAL], SMALL, deal_outcome=Outcome.WINNABLE)
    searched = analyse(start, [DEAL, DEAL], SMALL)
    assert known.slip == searched.slip and known.searches == searched.searches - 1
    unknown = analyse(start, [DEAL, DEAL], SMALL, deal_outcome=Outcome.UNKNOWN)
    assert unknown == searched  # an unknown verdict is no verdict: the deal is searched


def test_a_game_won_or_left_while_still_winnable_has_no_slip() -> None:
    start = position("corners", CLUBS_LEFT, redeals=2, stock="KC QC")
    won = analyse(start, [DEAL, HOME, DEAL, HOME], SMALL)
    assert won == Analysis(True, None, True, 1, True)  # a won end needs no search
    resigned = analyse(start, [DEAL, HOME], SMALL)
    assert resigned == Analysis(True, None, True, 2, True)
