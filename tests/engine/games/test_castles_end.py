"""Castle's End, rules.md §5: rules E1–E5 and the §7 scenarios about the base and A↔K."""

from __future__ import annotations

import pytest

from app.engine import DEVELOPMENT_KEY, InvalidMove, Move, get_ruleset
from app.engine.cards import code_of
from app.engine.deals import canonical_deck, shuffled
from tests.engine.builders import moves, play, position, refuse, show

GAME = "castles-end"
rules = get_ruleset(GAME)


def test_deal_ten_piles_of_six_six_and_five_all_face_up() -> None:
    cards = shuffled(DEVELOPMENT_KEY, GAME, 9, canonical_deck(1))
    state = rules.deal(9)
    view = rules.full_view(state)
    assert [len(view[f"t{j}"]) for j in range(1, 11)] == [6, 6, 5, 5, 5, 5, 5, 5, 5, 5]
    for j in range(10):
        extra = [cards[50 + j]] if j < 2 else []  # card 50 to t1, card 51 to t2
        assert view[f"t{j + 1}"] == [code_of(c) for c in [*cards[j:50:10], *extra]]
    assert all(view[f"f{j}"] == [] for j in range(1, 5))
    assert all(c >= 0 for pile in state.piles for c in pile)
    assert rules.base_rank(state) is None


def test_no_stock_or_waste() -> None:
    state = rules.deal(1)
    with pytest.raises(InvalidMove, match="has no pile called 'stock'"):
        rules.apply(state, Move("stock", "waste"))
    assert rules.redeals_left(state) is None


# -- E1 choosing the base ------------------------------------------------------------------


def test_E1_until_the_base_is_chosen_only_tops_to_empty_foundations() -> None:
    state = rules.deal(1)
    expected = {f"t{t}-f{f}" for t in range(1, 11) for f in range(1, 5)}
    assert moves(state) == expected


def test_E1_tableau_moves_refused_before_the_base_is_chosen() -> None:
    """§7: Castle's End tableau moves refused before the base is chosen."""
    state = position(GAME, t1="KD 5C", t2="9H 6C", t3="2S 9D")
    refuse(state, "t1-t2", "first choose the base", "foundation")
    refuse(state, "t1-t4", "first choose the base")  # not even to an empty pile
    after = play(state, "t3-f1").after  # once 9♦ has chosen the base …
    play(after, "t1-t2")  # … 5♣ goes on 6♣
    play(after, "t1-t4")


def test_E1_any_top_card_to_any_empty_foundation_sets_the_base_rank() -> None:
    state = position(GAME, t1="KD 5C", t2="9H 6C")
    step = play(state, "t1-f3")
    assert show(step.after, "f3") == "5C"
    assert rules.base_rank(step.after) == 5
    assert rules.base_rank(play(state, "t2-f4").after) == 6


# -- E2 foundations ------------------------------------------------------------------------


def test_E2_empty_foundation_then_takes_only_the_base_rank() -> None:
    state = position(GAME, f1="7D", t1="3C 7S", t2="3C 8S")
    assert show(play(state, "t1-f4").after, "f4") == "7S"
    refuse(state, "t2-f2", "only a 7", "empty foundation")


def test_E2_foundation_builds_up_in_suit_with_wrap() -> None:
    state = position(GAME, f1="QD", t1="3C KD", t2="3C JD", t3="3C KH")
    after = play(state, "t1-f1").after
    assert show(after, "f1") == "QD KD"
    refuse(state, "t2-f1", "J♦", "up by one in suit")
    refuse(state, "t3-f1", "K♥", "up in suit")
    wrap = position(GAME, f1="QD KD", t1="3C AD")
    assert show(play(wrap, "t1-f1").after, "f1") == "QD KD AD"


def test_E2_foundation_is_complete_at_13_cards() -> None:
    # An impossible position (a second Q♦), only to show the limit is 13 cards.
    state = position(GAME, f1="QD KD AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD", t1="QD")
    refuse(state, "t1-f1", "complete", "13 cards")


# -- E3 tableau ----------------------------------------------------------------------------


def test_E3_a_card_goes_on_its_suit_one_rank_higher_or_lower() -> None:
    state = position(GAME, f1="2H", t1="KS 6C", t2="QS 5C", t3="JS 7C")
    assert {"t2-t1", "t3-t1", "t1-t2", "t1-t3"} <= moves(state)
    assert show(play(state, "t2-t1").after, "t1") == "KS 6C 5C"  # down
    assert show(play(state, "t3-t1").after, "t1") == "KS 6C 7C"  # up


def test_E3_direction_may_change_within_a_pile() -> None:
    state = position(GAME, f1="2H", t1="KC 9H 8H", t2="3S TH")
    after = play(state, "t1-t3").after  # 8♥ went down on 9♥; now move it away …
    after = play(after, "t2-t1").after  # … and build up on the same 9♥
    assert show(after, "t1") == "KC 9H TH"


def test_E3_ace_and_king_are_not_neighbours_in_the_tableau() -> None:
    """§7: A↔K refused in the tableau."""
    state = position(GAME, f1="5H", t1="3D AS", t2="4D KS")
    refuse(state, "t2-t1", "K♠", "A♠", "an Ace and a King are not neighbours")
    refuse(state, "t1-t2", "A♠", "K♠", "an Ace and a King are not neighbours")


def test_E3_other_suits_and_rank_gaps_are_refused() -> None:
    state = position(GAME, f1="2H", t1="KS 5D", t2="QS 6C", t3="JS 7D", t4="TS 5D")
    refuse(state, "t2-t1", "6♣", "5♦", "of its suit one rank higher or lower")
    refuse(state, "t3-t1", "7♦", "5♦", "one rank higher or lower")
    refuse(state, "t4-t1", "5♦", "one rank higher or lower")  # the same rank


def test_E3_one_card_at_a_time() -> None:
    state = position(GAME, f1="2H", t1="KS 7C", t2="6C 5C")
    refuse(state, "t2-t1/2", "one card at a time")
    refuse(state, "t2-t3/2", "one card at a time")


# -- E4 empty piles ------------------------------------------------------------------------


def test_E4_an_empty_pile_accepts_any_tableau_top_card() -> None:
    state = position(GAME, f1="2H", t1="KS 7C", t2="9D", t3="4H QH")
    assert {"t1-t4", "t2-t4", "t3-t4", "t1-t10"} <= moves(state)
    assert show(play(state, "t3-t4").after, "t4") == "QH"
    step = play(state, "t2-t4")  # a pile emptied in Castle's End is not refilled
    assert show(step.after, "t2") == ""
    assert step.changed == ("t2", "t4")
    assert step.revealed is False


def test_no_card_ever_leaves_a_foundation() -> None:
    state = position(GAME, f1="2H 3H", t1="KS 4H")
    refuse(state, "f1-t2", "no card ever leaves a foundation")
    refuse(state, "f1-t1", "no card ever leaves a foundation")


# -- E5 the layout does not depend on the base --------------------------------------------


def test_E5_same_deal_number_same_layout_whatever_base_is_chosen() -> None:
    dealt = rules.deal(5)
    first = rules.full_view(dealt)
    bases = set()
    for move in rules.legal_moves(dealt):  # every possible choice of base
        after = rules.apply(dealt, move)
        bases.add(rules.base_rank(after))
        assert rules.deal(5) == dealt
        assert rules.full_view(rules.deal(5)) == first
    assert len(bases) > 1
    assert rules.full_view(rules.deal(1))["t1"] == ["AS", "8C", "3S", "5C", "JC", "7D"]
