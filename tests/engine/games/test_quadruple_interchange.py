"""Quadruple Interchange, rules.md §3: rules I1–I6 and the §7 scenarios about runs and flips."""

from __future__ import annotations

from app.engine import DEVELOPMENT_KEY, get_ruleset
from app.engine.deals import canonical_deck, shuffled
from tests.engine.builders import moves, play, position, refuse, show

GAME = "quadruple-interchange"
rules = get_ruleset(GAME)

HEARTS = "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"


def test_deal_eleven_rounds_alternately_face_up_and_down() -> None:
    cards = shuffled(DEVELOPMENT_KEY, GAME, 77, canonical_deck(4))
    state = rules.deal(77)
    for j in range(11):
        pile = rules.pile(state, f"t{j + 1}")
        assert len(pile) == 11
        for r, card in enumerate(pile):  # round r, 0-based: odd rounds face down
            assert card == (cards[11 * r + j] if r % 2 == 0 else ~cards[11 * r + j])
    assert rules.pile(state, "stock") == tuple(reversed(cards[121:]))  # card 121 on top
    assert len(rules.pile(state, "stock")) == 87
    assert rules.pile(state, "waste") == ()
    assert all(rules.pile(state, f"f{j}") == () for j in range(1, 17))
    # face up at positions 1, 3, … 11 counting from the bottom: the top card shows
    shown = rules.public_view(state)["t5"].cards
    assert shown is not None
    assert shown[1::2] == (None,) * 5
    assert None not in shown[0::2]


# -- I1 foundations ------------------------------------------------------------------------


def test_I1_any_ace_starts_any_empty_foundation() -> None:
    state = position(GAME, t1="5C AH", waste="AS", stock="2D")
    assert {f"t1-f{j}" for j in range(1, 17)} <= moves(state)
    assert {f"waste-f{j}" for j in range(1, 17)} <= moves(state)
    assert show(play(state, "t1-f16").after, "f16") == "AH"
    assert show(play(state, "waste-f1").after, "f1") == "AS"


def test_I1_empty_foundation_refuses_anything_but_an_ace() -> None:
    state = position(GAME, t1="5C 2H")
    refuse(state, "t1-f1", "only an A", "empty foundation")


def test_I1_foundation_builds_up_in_suit() -> None:
    state = position(GAME, f1="AH 2H", t1="5C 3H", t2="5C 3D", t3="5C 4H")
    assert show(play(state, "t1-f1").after, "f1") == "AH 2H 3H"
    refuse(state, "t2-f1", "3♦", "2♥", "up in suit")
    refuse(state, "t3-f1", "4♥", "up by one in suit", "only 3♥")


def test_I1_no_wrap_a_king_completes_the_foundation() -> None:
    state = position(GAME, f1=HEARTS, t1="5C AH", t2="5C KH")
    assert show(play(position(GAME, f1=HEARTS[:-3], t1="KH"), "t1-f1").after, "f1") == HEARTS
    refuse(state, "t1-f1", "complete", "13 cards")
    refuse(state, "t2-f1", "complete", "13 cards")


def test_I1_one_card_per_move_to_a_foundation() -> None:
    state = position(GAME, f1="AH", t1="5C 3H 2H")
    refuse(state, "t1-f1/2", "one at a time")
    play(state, "t1-f1")


# -- I2 tableau ----------------------------------------------------------------------------


def test_I2_tableau_builds_down_by_one_in_suit() -> None:
    state = position(GAME, t1="9H", t2="4S 8H", t3="4S 8D", t4="4S TH")
    assert show(play(state, "t2-t1").after, "t1") == "9H 8H"
    refuse(state, "t3-t1", "8♦", "9♥", "builds down by one in suit")
    refuse(state, "t4-t1", "10♥", "builds down by one in suit")


def test_I2_no_wrap_a_king_never_goes_on_an_ace() -> None:
    state = position(GAME, t1="5D AS", t2="5D KS")
    refuse(state, "t2-t1", "K♠", "A♠", "a King never goes on an Ace")
    refuse(state, "t1-t2", "A♠", "K♠", "builds down by one in suit")


# -- I3 runs -------------------------------------------------------------------------------


def test_I3_partial_run_moves_onto_a_matching_card() -> None:
    """§7: a partial run moved onto a matching card."""
    state = position(GAME, t1="(3C) 9S 8S 7S 6S", t2="KD 8S")
    step = play(state, "t1-t2/2")
    assert show(step.after, "t1") == "(3C) 9S 8S"
    assert show(step.after, "t2") == "KD 8S 7S 6S"
    assert step.revealed is False
    assert step.changed == ("t1", "t2")


def test_I3_partial_run_moves_onto_an_empty_pile() -> None:
    """§7: a partial run moved onto an empty pile."""
    state = position(GAME, t1="(3C) 9S 8S 7S 6S", t2="KD")
    after = play(state, "t1-t3/3").after
    assert show(after, "t1") == "(3C) 9S"
    assert show(after, "t3") == "8S 7S 6S"


def test_I3_every_part_of_a_run_is_offered() -> None:
    state = position(GAME, t1="(3C) 9S 8S 7S", t2="KD TS")
    assert {"t1-t3", "t1-t3/2", "t1-t3/3", "t1-t2/3"} <= moves(state)
    assert "t1-t3/4" not in moves(state)


def test_I3_broken_suit_run_is_refused() -> None:
    """§7: a broken-suit run refused."""
    state = position(GAME, t1="(3C) 9S 8H 7S", t2="KD 9H", t3="KD TS")
    refuse(state, "t1-t2/2", "not a run", "same suit")
    refuse(state, "t1-t4/2", "not a run", "same suit")
    refuse(state, "t1-t3/3", "not a run", "same suit")
    assert not {m for m in moves(state) if "/" in m}


def test_I3_a_run_descends_by_exactly_one() -> None:
    state = position(GAME, t1="9S 7S", t2="KD TS")
    refuse(state, "t1-t2/2", "not a run", "descends by one")
    refuse(state, "t1-t3/2", "not a run")


def test_I3_a_run_needs_a_card_one_rank_above_its_bottom_card() -> None:
    state = position(GAME, t1="9S 8S 7S", t2="KD 9S", t3="KD 8H")
    refuse(state, "t1-t2/3", "9♠", "9♠", "builds down by one in suit")
    refuse(state, "t1-t2", "7♠", "9♠", "builds down by one in suit")
    play(state, "t1-t2/2")
    refuse(state, "t1-t3/2", "8♠", "8♥", "builds down by one in suit")
    refuse(state, "t1-t3", "7♠", "8♥", "in suit")


def test_I3_only_single_cards_go_to_foundations() -> None:
    state = position(GAME, f1="AS 2S 3S 4S 5S", t1="7S 6S")
    refuse(state, "t1-f1/2", "foundation one at a time")
    play(state, "t1-f1")


def test_I3_only_the_waste_top_is_played() -> None:
    state = position(GAME, t1="9S", waste="7S 8S")
    refuse(state, "waste-t1/2", "only the top card of the waste")
    play(state, "waste-t1")


# -- I4 empty piles ------------------------------------------------------------------------


def test_I4_empty_pile_accepts_any_single_card_or_any_run() -> None:
    state = position(GAME, t1="KD 5C", t2="3H 9S 8S", waste="QD", stock="2C")
    assert {"waste-t3", "t1-t3", "t2-t3", "t2-t3/2"} <= moves(state)
    assert show(play(state, "waste-t3").after, "t3") == "QD"
    assert show(play(state, "t1-t3").after, "t3") == "5C"
    assert show(play(state, "t2-t3/2").after, "t3") == "9S 8S"


def test_I4_an_emptied_pile_is_not_refilled() -> None:
    state = position(GAME, t1="5C", t2="6C", waste="QD", stock="2C")
    step = play(state, "t1-t2")
    assert show(step.after, "t1") == ""
    assert step.changed == ("t1", "t2")


# -- I5 face-down cards --------------------------------------------------------------------


def test_I5_face_down_card_flips_in_the_same_step_and_undo_restores_it() -> None:
    """§7: a face-down card flipping in the same step and restored by undo."""
    state = position(GAME, t1="5C (AC) 6H", t2="KS 7H")
    step = play(state, "t1-t2")
    assert step.revealed is True
    assert show(step.after, "t1") == "5C AC"  # face up after the step
    assert step.after.piles[rules.pile_index("t1")][-1] >= 0
    assert show(step.before, "t1") == "5C (AC) 6H"  # undo goes back to it face down
    assert step.before == state
    assert step.changed == ("t1", "t2")
    assert rules.public_view(step.before)["t1"].cards == ("5C", None, "6H")
    assert rules.public_view(step.after)["t1"].cards == ("5C", "AC")


def test_I5_a_run_or_a_foundation_move_flips_the_card_beneath() -> None:
    state = position(GAME, f1="AH", t1="(QS) 7D 6D", t2="(9C) 2H")
    run = play(state, "t1-t3/2")
    assert show(run.after, "t1") == "QS"
    assert run.revealed is True
    up = play(state, "t2-f1")
    assert show(up.after, "t2") == "9C"
    assert up.revealed is True


def test_I5_no_flip_when_the_card_beneath_is_already_face_up() -> None:
    state = position(GAME, t1="(QS) 7D 6D", t2="KS 7H")
    step = play(state, "t1-t3")
    assert show(step.after, "t1") == "(QS) 7D"
    assert step.revealed is False


def test_I5_face_down_cards_can_never_be_moved() -> None:
    state = position(GAME, t1="5C (AC) 6H", t2="KS 7H", t3="(7C) (QD)")
    refuse(state, "t1-t4/2", "face-down cards cannot be moved")
    refuse(state, "t1-t4/3", "face-down cards cannot be moved")
    refuse(state, "t3-t4", "face-down cards cannot be moved")
    assert not {m for m in moves(state) if m.startswith("t3")}


# -- I6 stock ------------------------------------------------------------------------------


def test_I6_stock_is_dealt_one_card_at_a_time_and_the_waste_top_plays() -> None:
    state = position(GAME, t1="5C 9S", stock="KS 8S AD")
    step = play(state, "stock-waste")
    assert show(step.after, "waste") == "AD"
    assert step.revealed is True
    refuse(state, "stock-waste/2", "one card at a time")
    refuse(state, "stock-t2", "dealt to the waste")
    assert "waste-f1" in moves(step.after)
    after = play(play(step.after, "waste-f3").after, "stock-waste").after
    assert show(play(after, "waste-t1").after, "t1") == "5C 9S 8S"


def test_I6_no_redeal() -> None:
    state = position(GAME, t1="5C", waste="3C 4D")
    assert rules.redeals_left(state) is None
    refuse(state, "waste-stock/2", "only once")
    refuse(state, "t1-waste", "only the stock deals to the waste")
    assert not {m for m in moves(state) if m.endswith("stock") or "stock/" in m}
