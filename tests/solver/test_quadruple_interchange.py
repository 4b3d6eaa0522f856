"""Quadruple Interchange's search model (app/solver/quadruple_interchange.py): runs in suit, its
moves best first (home, then turning a card up or emptying a pile, then the rest, dealing
last) without pointless ones, face-down cards turned up as the engine does, and its key."""

from __future__ import annotations

import pytest

from app.engine import State, get_ruleset
from app.solver import model_for
from app.solver.lines import to_moves
from app.solver.quadruple_interchange import run_length
from tests.engine.builders import cards, position

RULES = get_ruleset("quadruple-interchange")
MODEL = model_for("quadruple-interchange")
GAME = "quadruple-interchange"


def moves_of(state: State) -> list[str]:
    return [str(m) for m in to_moves(MODEL, [mv for mv, _, _ in MODEL.children(state.piles, 0)])]


@pytest.mark.parametrize(
    ("pile", "run"),
    [
        ("", 0),
        ("5S (6S)", 0),  # a face-down top never moves
        ("5S", 1),
        ("9D 7S 6S 5S", 3),  # down in suit, broken by another suit
        ("8S 6S 5S", 2),  # broken by a gap
        ("(7S) 6S 5S", 2),  # broken by a face-down card
        ("AD KC", 1),  # faces 13 and 12 are next to each other, but no card follows a King
    ],
)
def test_a_run_is_the_top_cards_down_by_one_in_suit_face_up(pile: str, run: int) -> None:
    assert run_length(cards(pile)) == run


def test_moves_come_best_first_and_pointless_ones_are_left_out() -> None:
    state = position(
        GAME, f1="AC 2C 3C", t1="(9H) 4C", t2="(KD) 7S 6S 5S", t3="8S", waste="QD", stock="JD"
    )
    assert moves_of(state) == [
        "t1-f1",  # home
        "t1-t4",  # turns 9♥ up
        "t2-t3/3",  # turns K♦ up
        "t2-t4/3",
        "waste-t4",  # the rest
        "t2-t4",
        "t2-t4/2",
        "stock-waste",  # dealing last
    ]
    engine = {str(m) for m in RULES.legal_moves(state)}
    assert set(moves_of(state)) <= engine
    # Left out: runs to empty piles other than the first, a whole pile to an empty one.
    assert {"t1-t5", "t2-t9/3", "t3-t4"} <= engine - set(moves_of(state))


def test_each_child_is_the_engines_position_after_the_move_card_turned_up_included() -> None:
    state = position(
        GAME, f1="AC 2C 3C", t1="(9H) 4C", t2="(KD) 7S 6S 5S", t3="8S", waste="QD", stock="JD"
    )
    kids = MODEL.children(state.piles, 0)
    for mv, child, redeals in kids:
        (move,) = to_moves(MODEL, [mv])
        assert child == RULES.apply(state, move).piles and redeals == 0
    _, home, _ = kids[0]
    assert RULES.pile(State(GAME, home), "t1") == cards("9H")  # I5: face up in the same step


def test_an_ace_goes_to_the_first_empty_foundation_and_the_waste_onto_a_fitting_top() -> None:
    state = position(GAME, f1="AC", t1="9H", waste="8H AS", stock="JD")
    assert moves_of(state) == ["waste-f2", "waste-t2", "stock-waste"]
    after = position(GAME, f1="AC", t1="9H", waste="8H", stock="JD")
    assert moves_of(after)[:1] == ["waste-t1"]


def test_the_key_sees_foundation_tops_and_tableau_contents_not_which_pile_is_where() -> None:
    one = position(GAME, f1="AC 2C", f2="AS", t1="(9H) 4C", t2="8S", stock="JD QD")
    other = position(GAME, f5="AC 2C", f9="AS", t7="(9H) 4C", t3="8S", stock="JD QD")
    assert MODEL.key(one.piles, 0) == MODEL.key(other.piles, 0)
    flipped = position(GAME, f1="AC 2C", f2="AS", t1="9H 4C", t2="8S", stock="JD QD")
    assert MODEL.key(flipped.piles, 0) != MODEL.key(one.piles, 0)
    dealt = position(GAME, f1="AC 2C", f2="AS", t1="(9H) 4C", t2="8S", stock="JD", waste="QD")
    assert MODEL.key(dealt.piles, 0) != MODEL.key(one.piles, 0)
    assert not MODEL.dead(one.piles, 0)  # no dead-end rule: the search never cuts
