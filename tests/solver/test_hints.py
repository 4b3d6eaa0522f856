"""Hints (app/solver/hints.py): exact where nothing is hidden, never dependent on a hidden
card, and, followed one after another with the kept line continued (the coach of issue #22),
they win."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import Move, State, get_ruleset
from app.solver import ESTIMATE, Budget, Outcome, follow, hint, solve, visible_only
from app.solver.sampling import fully_visible
from tests.engine.builders import position

HIDDEN_GAMES = ["corners", "patriarchs", "quadrangle", "quadruple-interchange"]


def played(game: str, number: int, picks: list[int]) -> State:
    rules = get_ruleset(game)
    state = rules.deal(number)
    for pick in picks:
        moves = rules.legal_moves(state)
        if not moves:
            break
        state = rules.apply(state, moves[pick % len(moves)])
    return state


def with_hidden_cards_shuffled(state: State, order: list[int]) -> State:
    """The same position as the player sees it, the hidden cards dealt in another order."""
    rules = get_ruleset(state.game)
    hide_stock = rules.stock >= 0 and state.redeals == 0
    hidden = [~c for p in state.piles for c in p if c < 0]
    if hide_stock:
        hidden += list(state.piles[rules.stock])
    keyed = sorted(range(len(hidden)), key=lambda i: order[i % len(order)] if order else i)
    cards = iter([hidden[i] for i in keyed])
    piles = []
    for i, pile in enumerate(state.piles):
        if i == rules.stock and hide_stock:
            piles.append(pile)
        else:
            piles.append(tuple(~next(cards) if c < 0 else c for c in pile))
    if hide_stock:
        piles[rules.stock] = tuple(cards)
    return State(state.game, tuple(piles), state.redeals)


@pytest.mark.slow
@pytest.mark.parametrize("game", HIDDEN_GAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    number=st.integers(1, 10**6),
    picks=st.lists(st.integers(0, 50), max_size=25),
    order=st.lists(st.integers(0, 1000), min_size=1, max_size=300),
)
def test_a_hint_is_unchanged_when_the_hidden_cards_are_shuffled(
    game: str, number: int, picks: list[int], order: list[int]
) -> None:
    state = played(game, number, picks)
    other = with_hidden_cards_shuffled(state, order)
    assert get_ruleset(game).public_view(other) == get_ruleset(game).public_view(state)
    budget = Budget(nodes=3_000)
    given = hint(state, budget)
    assert hint(other, budget) == given
    assert visible_only(other) == visible_only(state)
    legal = get_ruleset(game).legal_moves(state)
    if fully_visible(state):
        return
    # Hidden cards: always a legal move while one exists (issue #22), and an estimate.
    assert given.outcome == ESTIMATE and given.chance is not None and 0 <= given.chance <= 1
    assert (given.move in legal) if legal else given.move is None


@pytest.mark.parametrize("game", HIDDEN_GAMES)
def test_a_hint_in_a_hidden_card_game_is_a_legal_move_or_says_there_is_none(game: str) -> None:
    rules = get_ruleset(game)
    for number in range(1, 6):
        state = rules.deal(number)
        given_hint = hint(state, Budget(nodes=3_000))
        assert given_hint.outcome == ESTIMATE and not given_hint.exact
        assert given_hint.move in rules.legal_moves(state)
        assert given_hint.chance is not None and 0 <= given_hint.chance <= 1
        assert "chance" in given_hint.message


def test_a_hidden_card_hint_plays_what_the_visible_cards_allow() -> None:
    # Corners: the waste's 5♣ fits the ♣ foundation at once.
    state = position(
        "corners",
        f1="3C 4C",
        f2="KD",
        f3="KH",
        f4="KS",
        r1="9D",
        waste="5C",
        stock="QD JD TD",
    )
    given = hint(state, Budget(nodes=1_000))
    assert str(given.move) == "waste-f1"
    assert given.outcome == ESTIMATE


@pytest.mark.slow
def test_castles_end_hints_are_exact() -> None:
    rules = get_ruleset("castles-end")
    seen = set()
    for number in range(1, 13):
        deal = rules.deal(number)
        truth = solve(deal, Budget(nodes=200_000)).outcome
        given = hint(deal, Budget(nodes=200_000))
        assert given.exact and given.outcome is truth
        seen.add(truth)
        if truth is Outcome.WINNABLE:
            assert given.move is not None
            after = rules.apply(deal, given.move)
            assert solve(after, Budget(nodes=200_000)).outcome is Outcome.WINNABLE
        else:
            assert given.move is None
            assert given.message == "This position can no longer be won."
    assert seen == {Outcome.WINNABLE, Outcome.LOST}


def test_a_corners_game_is_fully_visible_after_its_first_redeal() -> None:
    state = position(
        "corners", redeals=1, f1="QC KC", f2="KD", f3="KH", f4="KS", stock="AC", waste=""
    )
    assert fully_visible(state)
    given = hint(state)
    assert given.exact
    assert not fully_visible(position("corners", f1="QC KC", f2="KD", f3="KH", f4="KS", stock="AC"))


def test_an_undecided_exact_hint_says_so() -> None:
    deal = get_ruleset("castles-end").deal(1)
    given = hint(deal, Budget(nodes=2))
    assert given.outcome is Outcome.UNKNOWN and given.move is None
    assert "could not decide" in given.message


@pytest.mark.parametrize("nodes", [1_000, 20_000])
def test_with_no_win_in_sight_a_quadrangle_hint_keeps_the_wastes_card_before_dealing(
    nodes: int,
) -> None:
    """Quadrangle has no redeal: a deal covers the waste's top card for good. With no win in
    any arrangement and no card to put home, the hint moves the waste's 8♠ onto 9♠ (as a
    greedy player would) rather than deal — dealing first lost deals greedy play wins."""
    state = position(
        "quadrangle",
        f1="7H",
        t1="9S",
        t2="KC",
        t3="QD",
        t4="JC",
        t5="TD",
        t6="KD",
        t7="2C",
        t8="3D",
        t9="4C",
        t10="5D",
        t11="6C",
        t12="AD",
        waste="8S",
        stock="2S 3S",
    )
    rules = get_ruleset("quadrangle")
    assert Move.parse("stock-waste") in rules.legal_moves(state)
    given = hint(state, Budget(nodes=nodes))
    assert given.outcome == ESTIMATE and given.chance == 0
    assert given.move is not None and str(given.move) == "waste-t1"
    assert "in play" in given.message
    after = rules.apply(state, given.move)  # then, with nothing else to do, it deals
    assert str(hint(after, Budget(nodes=nodes)).move) == "stock-waste"


def test_with_no_win_in_sight_a_quadruple_interchange_hint_turns_a_face_down_card_over() -> None:
    """No card can go home and the waste's 8♥ fits nowhere: the hint moves t1's 5♣ onto 6♣,
    which turns the card under it over, rather than deal (before, only cards home counted, and
    hint-led games dealt the stock out past every face-down card). The best line seen first
    moves T♠ onto J♠ (emptying t9, then turning the card over): that move is refused as
    uphill (``_onward``: T♠ could go straight back), so the line starts with 5♣ instead."""
    state = position(
        "quadruple-interchange",
        t1="(KH) 5C",
        t2="(2S) 6C",
        t3="9D",
        t4="JS",
        t5="4D",
        t6="7S",
        t7="QC",
        t8="3H",
        t9="TS",
        t10="8D",
        t11="KD",
        waste="8H",
        stock="QD 3S",
    )
    rules = get_ruleset("quadruple-interchange")
    assert Move.parse("stock-waste") in rules.legal_moves(state)
    given = hint(state, Budget(nodes=1_000))
    assert given.outcome == ESTIMATE and given.chance == 0
    assert given.move is not None and str(given.move) == "t1-t2"
    assert [w.code for w in given.words][1] == "guess_turn"
    assert "face-down card over" in given.message
    # The same, whatever the face-down cards and the stock's order are.
    other = with_hidden_cards_shuffled(state, [3, 1, 2])
    assert other != state and hint(other, Budget(nodes=1_000)) == given


@pytest.mark.slow
def test_a_hint_led_quadruple_interchange_game_turns_cards_over_and_does_not_circle() -> None:
    """Deal 1 followed hint after hint (200 positions each) while the stock lasts: no position
    comes back, 61 cards are home and 34 of the 55 face-down cards are still down when the
    stock is out. Main's hints before this (only cards home counted) had 18 home there: they
    dealt whenever no card could go home."""
    rules = get_ruleset("quadruple-interchange")
    state = rules.deal(1)
    seen = {state}
    stock = rules.stock
    while state.piles[stock]:
        given = hint(state, Budget(nodes=200))
        assert given.move is not None
        state = rules.apply(state, given.move)
        assert state not in seen
        seen.add(state)
    home = sum(len(state.piles[f]) for f in rules.foundations)
    face_down = sum(1 for pile in state.piles for c in pile if c < 0)
    assert home >= 40 and face_down <= 45  # 55 face down at the deal


MOVE_CAP = 2_000


def play_by_hints(state: State, budget: Budget) -> tuple[State, int]:
    """Follows hint after hint as the services give them: a kept winning line is continued
    while the position is on it, and a new search runs only off it. Returns the end position
    and the number of searches."""
    rules = get_ruleset(state.game)
    kept: tuple[State, tuple[Move, ...]] | None = None
    searches = 0
    for _ in range(MOVE_CAP):
        if rules.is_won(state):
            break
        rest = follow(kept[0], kept[1], state) if kept else None
        if rest:
            move = rest[0]
        else:
            given = hint(state, budget)
            searches += 1
            if given.move is None:
                break
            if given.line:
                assert given.line[0] == given.move
                kept = (state, given.line)
            move = given.move
        state = rules.apply(state, move)
    return state, searches


@pytest.mark.slow
def test_following_hints_wins_every_winnable_castles_end_deal_among_the_first_100() -> None:
    rules = get_ruleset("castles-end")
    # 20,000 positions decide the same 60 deals winnable as 200,000, in well under half the time
    # (the search's first depth-first pass is 5% of the budget: long, on a deal it cannot win).
    budget = Budget(nodes=20_000)
    winnable = 0
    for number in range(1, 101):
        deal = rules.deal(number)
        if solve(deal, budget, short=False).outcome is not Outcome.WINNABLE:
            continue
        winnable += 1
        end, searches = play_by_hints(deal, budget)
        assert rules.is_won(end), f"deal {number}"
        assert rules.on_foundations(end) == rules.cards
        assert searches == 1, f"deal {number}: the kept line was left ({searches} searches)"
    assert winnable >= 50  # 57% of deals 1..200 (bench/RESULTS.md)


def test_a_new_search_starts_where_the_player_leaves_the_line_and_still_wins() -> None:
    rules = get_ruleset("castles-end")
    deal = rules.deal(1)
    budget = Budget(nodes=200_000)
    first = hint(deal, budget)
    assert first.line and first.move == first.line[0]
    # Step off the line with a move that keeps the deal winnable, then follow hints.
    state = rules.apply(deal, first.line[0])
    off = next(
        m
        for m in rules.legal_moves(state)
        if m != first.line[1] and solve(rules.apply(state, m), budget).outcome is Outcome.WINNABLE
    )
    state = rules.apply(state, off)
    assert follow(deal, first.line, state) is None
    end, searches = play_by_hints(state, budget)
    assert rules.is_won(end) and searches == 1


def test_follow_continues_a_line_only_on_its_positions() -> None:
    rules = get_ruleset("castles-end")
    deal = rules.deal(1)
    line = solve(deal, Budget(nodes=200_000)).moves
    after_two = rules.apply(rules.apply(deal, line[0]), line[1])
    assert follow(deal, line, deal) == line
    assert follow(deal, line, after_two) == line[2:]
    assert follow(deal, line, rules.deal(2)) is None
    assert follow(deal, line, rules.replay(deal, line)) is None  # the end: nothing left


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "deals"), [("corners", (1, 2, 3)), ("patriarchs", (2,)), ("quadrangle", (1, 3))]
)
def test_following_exact_hints_wins_once_every_card_has_been_seen(
    game: str, deals: tuple[int, ...]
) -> None:
    """Where the hint search proves wins in the games with a stock: after the first redeal
    (Quadrangle, which has none: once the stock is dealt out) every card has been seen, the
    hints are exact, and following them wins. (Quadruple Interchange keeps face-down cards
    in its tableau: its hints are estimates, not proofs.)"""
    rules = get_ruleset(game)
    tried = 0
    for number in deals:
        deal = rules.deal(number)
        line = solve(deal, Budget(nodes=300_000)).moves
        state = deal
        for move in line:
            if fully_visible(state) and not rules.is_won(state):
                break
            state = rules.apply(state, move)
        if not fully_visible(state) or rules.is_won(state):
            continue  # won before a redeal: nothing exact to follow
        tried += 1
        end, _ = play_by_hints(state, Budget(nodes=300_000))
        assert rules.is_won(end), f"{game} deal {number}"
    assert tried
