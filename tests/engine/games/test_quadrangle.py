"""Quadrangle, rules.md §2: one test (or more) per numbered rule Q1–Q5 and per §7 scenario."""

from __future__ import annotations

from app.engine import DEVELOPMENT_KEY, get_ruleset
from app.engine.cards import code_of
from app.engine.deals import canonical_deck, shuffled
from tests.engine.builders import moves, play, position, refuse, show

GAME = "quadrangle"
rules = get_ruleset(GAME)

CLUBS_FROM_7 = "7C 8C 9C TC JC QC KC AC 2C 3C 4C 5C 6C"


def test_deal_round_robin_base_card_and_stock() -> None:
    cards = shuffled(DEVELOPMENT_KEY, GAME, 42, canonical_deck(2))
    state = rules.deal(42)
    view = rules.full_view(state)
    for j in range(12):
        assert view[f"t{j + 1}"] == [code_of(cards[j + 12 * r]) for r in range(3)]
    assert view["f1"] == [code_of(cards[36])]
    assert all(view[f"f{j}"] == [] for j in range(2, 9))
    assert view["stock"] == [code_of(c) for c in reversed(cards[37:])]  # card 37 on top
    assert len(view["stock"]) == 67
    assert view["waste"] == []
    assert all(c >= 0 for pile in state.piles for c in pile)  # all face up
    assert rules.base_rank(state) == cards[36] % 13 + 1


# -- Q1 foundations ------------------------------------------------------------------------


def test_Q1_foundation_builds_up_in_suit_from_the_base() -> None:
    state = position(GAME, f1="7C 8C", t1="9C", t2="9D", t3="TC", stock="KS")
    after = play(state, "t1-f1").after
    assert show(after, "f1") == "7C 8C 9C"
    refuse(state, "t2-f1", "9♦", "8♣", "up in suit")
    refuse(state, "t3-f1", "10♣", "up by one in suit", "only 9♣")


def test_Q1_foundation_wraps_from_king_to_ace() -> None:
    state = position(GAME, f1="7C 8C 9C TC JC QC KC", t1="5H AC", t2="2C")
    after = play(state, "t1-f1").after
    assert show(after, "f1") == "7C 8C 9C TC JC QC KC AC"
    after = play(after, "t2-f1").after
    assert show(after, "f1").endswith("AC 2C")


def test_Q1_empty_foundation_takes_a_base_rank_card_of_any_suit() -> None:
    state = position(GAME, f1="7C", t1="5S 7H", t2="5S 7D", stock="QD QS")
    assert {"t1-f2", "t1-f8", "t2-f2", "t2-f8"} <= moves(state)
    after = play(state, "t1-f2").after
    after = play(after, "t2-f8").after
    assert show(after, "f2") == "7H"
    assert show(after, "f8") == "7D"
    assert rules.base_rank(after) == 7


def test_Q1_base_card_fixes_the_suit_of_its_foundation() -> None:
    state = position(GAME, f1="7C", f2="7H", t1="KS 8D", t2="KS 8H")
    refuse(state, "t1-f2", "8♦", "7♥", "in suit")
    play(state, "t2-f2")


def test_Q1_empty_foundation_refuses_other_ranks() -> None:
    state = position(GAME, f1="7C", t1="5S 8H", waste="6D")
    refuse(state, "t1-f2", "only a 7", "empty foundation")
    refuse(state, "waste-f3", "only a 7", "empty foundation")


def test_Q1_wrapped_foundation_is_complete_at_13_and_refuses_a_14th_card() -> None:
    """§7: a full wrap-around foundation that refuses a 14th card (the other deck's 7♣)."""
    state = position(GAME, f1=CLUBS_FROM_7, t1="5S 7C", waste="7C")
    assert len(rules.pile(state, "f1")) == 13
    refuse(state, "t1-f1", "complete", "13 cards")
    refuse(state, "waste-f1", "complete", "13 cards")
    # The second 7♣ still starts a foundation of its own.
    play(state, "t1-f2")


def test_Q1_base_rank_cards_are_never_moved_to_a_foundation_automatically() -> None:
    state = position(GAME, f1="7C", t1="8S", t2="9S", stock="7H 7D")
    dealt = play(state, "stock-waste")
    assert show(dealt.after, "waste") == "7D"
    assert dealt.changed == ("stock", "waste")
    refilled = play(dealt.after, "t1-t2")  # t1 takes the waste top, the 7♦, and keeps it
    assert show(refilled.after, "t1") == "7D"
    assert [show(refilled.after, f"f{j}") for j in range(2, 9)] == [""] * 7
    assert "t1-f2" in moves(refilled.after)  # the player may move it


# -- Q2 tableau ----------------------------------------------------------------------------


def test_Q2_tableau_builds_down_by_one_in_suit() -> None:
    state = position(GAME, f1="2C", t1="9H", t2="4S 8H", t3="4S 8D", t4="4S TH", t5="4S 7H")
    after = play(state, "t2-t1").after
    assert show(after, "t1") == "9H 8H"
    refuse(state, "t3-t1", "8♦", "9♥", "builds down by one in suit")
    refuse(state, "t4-t1", "10♥", "builds down by one in suit")
    refuse(state, "t5-t1", "7♥", "builds down by one in suit")


def test_Q2_king_goes_on_ace_but_ace_not_on_king() -> None:
    """§7: K-on-A legal but A-on-K illegal in Quadrangle."""
    state = position(GAME, f1="2C", t1="5D AS", t2="5D KS")
    after = play(state, "t2-t1").after
    assert show(after, "t1") == "5D AS KS"
    refuse(state, "t1-t2", "A♠", "K♠", "builds down by one in suit")


# -- Q3 what moves -------------------------------------------------------------------------


def test_Q3_only_the_top_card_moves_one_at_a_time() -> None:
    state = position(GAME, f1="2C", t1="TH", t2="4S 9H 8H")
    refuse(state, "t2-t1/2", "only the top card", "one card at a time")
    assert not any(m.count > 1 for m in rules.legal_moves(state))


def test_Q3_tableau_and_waste_tops_go_to_foundations_and_tableau() -> None:
    state = position(GAME, f1="2C", t1="4S 3C", t2="4S 4D", waste="5S 3D", stock="KH")
    assert {"t1-f1", "waste-t2"} <= moves(state)
    assert "t1-f2" not in moves(state)  # 3♣ is not of the base rank
    play(state, "t1-f1")
    after = play(state, "waste-t2").after
    assert show(after, "t2") == "4S 4D 3D"
    assert show(after, "waste") == "5S"


def test_Q3_nothing_goes_to_the_waste_or_the_stock() -> None:
    state = position(GAME, f1="2C", t1="4S 3C", waste="5S", stock="KH")
    refuse(state, "t1-waste", "only the stock deals to the waste")
    refuse(state, "t1-stock", "never go back to the stock")


def test_Q3_a_waste_card_never_goes_to_an_empty_pile() -> None:
    state = position(GAME, f1="2C", t1="4S", waste="5S")
    refuse(state, "waste-t2", "empty pile", "another tableau pile")


# -- Q4 refill -----------------------------------------------------------------------------


def test_Q4_emptied_pile_is_refilled_from_the_waste_top_in_the_same_step() -> None:
    state = position(GAME, f1="2C", t1="8H", t2="9H", waste="3C 4D", stock="KS QS")
    step = play(state, "t1-t2")
    assert show(step.after, "t1") == "4D"
    assert show(step.after, "waste") == "3C"
    assert show(step.after, "stock") == "KS QS"
    assert step.changed == ("waste", "t1", "t2")
    assert step.revealed is False  # the waste top was already in sight


def test_Q4_emptied_pile_takes_the_stock_top_when_the_waste_is_empty() -> None:
    """§7: a Quadrangle pile emptied with waste empty taking the stock top."""
    state = position(GAME, f1="2C", t1="3C", stock="KS QS")
    step = play(state, "t1-f1")
    assert show(step.after, "t1") == "QS"
    assert step.after.piles[rules.pile_index("t1")][0] >= 0  # face up
    assert show(step.after, "stock") == "KS"
    assert show(step.after, "waste") == ""
    assert step.changed == ("stock", "f1", "t1")
    assert step.revealed is True


def test_Q4_pile_emptied_without_stock_or_waste_stays_empty_and_takes_any_card() -> None:
    """§7: a pile emptied with stock and waste empty staying empty and taking any card."""
    state = position(GAME, f1="2C", t1="8H", t2="9H", t3="4S 2D", t4="6C JS")
    step = play(state, "t1-t2")
    assert show(step.after, "t1") == ""
    assert step.revealed is False
    assert {"t2-t1", "t3-t1", "t4-t1"} <= moves(step.after)
    after = play(step.after, "t3-t1").after
    assert show(after, "t1") == "2D"
    assert show(after, "t3") == "4S"


# -- Q5 stock ------------------------------------------------------------------------------


def test_Q5_stock_is_dealt_to_the_waste_one_card_at_a_time() -> None:
    state = position(GAME, f1="2C", t1="5D", stock="KS QS JS")
    step = play(state, "stock-waste")
    assert show(step.after, "waste") == "JS"
    assert show(step.after, "stock") == "KS QS"
    assert step.revealed is True
    refuse(state, "stock-waste/2", "one card at a time")
    refuse(state, "stock-t1", "dealt to the waste")
    refuse(state, "stock-f1", "dealt to the waste")


def test_Q5_no_redeal() -> None:
    state = position(GAME, f1="2C", t1="5D", waste="3C 4D")
    assert rules.redeals_left(state) is None
    refuse(state, "waste-stock/2", "only once")
    assert not moves(state) & {"waste-stock/2", "stock-waste"}
