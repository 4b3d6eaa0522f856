"""Corners, rules.md §4: rules C1–C4 and the §7 scenarios about refills and redeals."""

from __future__ import annotations

from app.engine import DEVELOPMENT_KEY, Move, State, get_ruleset
from app.engine.cards import suit_of
from app.engine.deals import canonical_deck, shuffled
from tests.engine.builders import moves, play, position, refuse, show

GAME = "corners"
rules = get_ruleset(GAME)

BASES = {"f1": "KC", "f2": "QD", "f3": "7H", "f4": "5S"}


def corners(redeals: int = 0, **piles: str) -> State:
    """A Corners position with the foundation bases above unless given."""
    return position(GAME, redeals=redeals, **{**BASES, **piles})


def test_deal_first_card_of_each_suit_is_its_base_then_reserves_then_stock() -> None:
    cards = shuffled(DEVELOPMENT_KEY, GAME, 31, canonical_deck(1))
    bases = {s: next(c for c in cards if suit_of(c) == s) for s in range(4)}
    rest = [c for c in cards if c not in bases.values()]
    state = rules.deal(31)
    for s in range(4):
        assert rules.pile(state, f"f{s + 1}") == (bases[s],)  # f1 ♣, f2 ♦, f3 ♥, f4 ♠
    for i in range(5):
        assert rules.pile(state, f"r{i + 1}") == (rest[i],)
    assert rules.pile(state, "stock") == tuple(reversed(rest[5:]))  # first on top
    assert len(rules.pile(state, "stock")) == 43
    assert rules.pile(state, "waste") == ()
    assert rules.redeals_left(state) == 2


# -- C1 foundations ------------------------------------------------------------------------


def test_C1_foundation_builds_up_in_suit_from_its_own_base_with_wrap() -> None:
    state = corners(r1="KD", stock="2S AD")
    step = play(state, "r1-f2")
    assert show(step.after, "f2") == "QD KD"
    step = play(step.after, "r1-f2")  # r1 was refilled with A♦: K♦ → A♦ wraps
    assert show(step.after, "f2") == "QD KD AD"


def test_C1_each_foundation_has_its_own_base() -> None:
    state = corners(r1="AC", r2="KD", r3="8H", r4="6S", stock="2C 3C 4C 5C")
    assert {"r1-f1", "r2-f2", "r3-f3", "r4-f4"} <= moves(state)


def test_C1_building_down_is_never_allowed() -> None:
    state = corners(r1="JD", r2="QC", waste="6H")
    refuse(state, "r1-f2", "J♦", "Q♦", "up by one in suit", "only K♦")
    refuse(state, "r2-f1", "Q♣", "K♣", "up by one in suit", "only A♣")
    refuse(state, "waste-f3", "6♥", "up by one in suit")


def test_C1_each_foundation_takes_only_its_own_suit() -> None:
    state = corners(r1="KH", waste="6S", f4="5S")
    refuse(state, "r1-f2", "K♥", "foundation f2", "♦ only")
    refuse(state, "waste-f3", "6♠", "♥ only")
    play(state, "waste-f4")


def test_C1_foundation_is_complete_at_13_cards() -> None:
    # An impossible position (a second Q♦), only to show the limit is 13 cards.
    state = corners(f2="QD KD AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD", r1="QD")
    refuse(state, "r1-f2", "complete", "13 cards")


# -- C2 where cards go ---------------------------------------------------------------------


def test_C2_reserve_tops_and_the_waste_top_go_to_the_foundations() -> None:
    state = corners(r3="AC", waste="TS 8H", stock="4D")
    assert {"r3-f1", "waste-f3"} <= moves(state)
    play(state, "r3-f1")
    play(state, "waste-f3")


def test_C2_no_building_on_reserves_and_no_other_moves() -> None:
    state = corners(r1="6C", r2="7S", r4="5C", waste="8S 4C", stock="4D")
    refuse(state, "r1-r2", "only to the foundations")
    refuse(state, "waste-r4", "only to the foundations")
    refuse(state, "waste-r3", "only to the foundations")  # not even a vacant reserve
    refuse(state, "r1-waste", "only to the foundations")
    refuse(state, "stock-r3", "dealt to the waste")
    assert moves(state) == {"stock-waste"}


# -- C3 refill -----------------------------------------------------------------------------


def test_C3_emptied_reserve_is_refilled_from_the_stock_not_the_waste() -> None:
    """§7: a Corners reserve refilled from the stock (not the waste)."""
    state = corners(r1="KD", r2="2S", waste="3S", stock="4H 6C")
    step = play(state, "r1-f2")
    assert show(step.after, "r1") == "6C"
    assert show(step.after, "stock") == "4H"
    assert show(step.after, "waste") == "3S"
    assert step.changed == ("stock", "f2", "r1")
    assert step.revealed is True


def test_C3_reserve_stays_vacant_while_the_stock_is_empty() -> None:
    state = corners(r1="KD", r2="2S", waste="3S")
    step = play(state, "r1-f2")
    assert show(step.after, "r1") == ""
    assert show(step.after, "waste") == "3S"
    assert step.revealed is False
    play(step.after, "waste-stock")  # the vacancy waits for the redeal


def test_C3_playing_the_waste_top_refills_nothing() -> None:
    state = corners(r1="9S", waste="KD", stock="4H 6C")
    step = play(state, "waste-f2")
    assert step.changed == ("waste", "f2")
    assert step.revealed is False


# -- C4 redeal -----------------------------------------------------------------------------


def full_reserves(redeals: int = 0, **piles: str) -> State:
    return corners(redeals, r1="9S", r2="9S", r3="9S", r4="9S", r5="9S", **piles)


def test_C4_redeal_turns_the_waste_over_without_shuffling() -> None:
    state = full_reserves(waste="2S 3H 4D")  # 2♠ went to the waste first
    step = play(state, "waste-stock/3")
    assert show(step.after, "stock") == "4D 3H 2S"  # … so it is dealt first
    assert show(step.after, "waste") == ""
    assert step.after.redeals == 1
    assert rules.redeals_left(step.after) == 1
    assert step.revealed is False  # no vacancy, nothing new in sight
    assert show(play(step.after, "stock-waste").after, "waste") == "2S"


def test_C4_redeal_fills_vacant_reserves_in_order_r1_to_r5() -> None:
    """§7: vacancies filled at redeal in order r1…r5."""
    state = corners(r1="9S", r3="9S", r5="9S", waste="2S 3H 4D")
    step = play(state, "waste-stock/3")
    assert show(step.after, "r2") == "2S"
    assert show(step.after, "r4") == "3H"
    assert show(step.after, "stock") == "4D"
    assert step.changed == ("stock", "waste", "r2", "r4")


def test_C4_a_redeal_that_fills_reserves_is_a_revealing_step() -> None:
    """``revealed`` is True for every step that takes cards off the stock, this one included
    (the filling cards had been seen on the waste; the definition is structural)."""
    step = play(corners(r1="9S", r3="9S", r5="9S", waste="2S 3H 4D"), "waste-stock/3")
    assert step.revealed is True


def test_C4_redeal_fills_as_many_vacancies_as_the_waste_allows() -> None:
    state = corners(r3="9S", waste="2S 3H")
    step = play(state, "waste-stock/2")
    assert [show(step.after, f"r{i}") for i in range(1, 6)] == ["2S", "3H", "9S", "", ""]
    assert show(step.after, "stock") == ""


def test_C4_redeal_only_when_the_stock_is_empty_and_the_waste_is_not() -> None:
    refuse(full_reserves(waste="2S", stock="5C"), "waste-stock", "only when the stock is empty")
    empty = full_reserves()
    assert not any(m.startswith("waste-stock") for m in moves(empty))
    with_waste = full_reserves(waste="2S 3H")
    refuse(with_waste, "waste-stock", "whole waste", "2 cards")


def test_C4_second_redeal_allowed() -> None:
    state = full_reserves(waste="2S 3H", redeals=1)
    after = play(state, "waste-stock/2").after
    assert after.redeals == 2
    assert rules.redeals_left(after) == 0


def test_C4_third_redeal_refused() -> None:
    """§7: a third Corners redeal refused."""
    state = full_reserves(waste="2S 3H", redeals=2)
    assert rules.redeals_left(state) == 0
    refuse(state, "waste-stock/2", "no redeals left", "2 times")


def test_C4_three_passes_in_all_through_a_real_deal() -> None:
    state = rules.deal(1)
    for pass_number in range(3):
        while rules.pile(state, "stock"):
            state = rules.apply(state, Move("stock", "waste"))
        waste = len(rules.pile(state, "waste"))
        assert waste == 43
        redeal = Move("waste", "stock", waste)
        if pass_number < 2:
            state = rules.apply(state, redeal)
            first_dealt = rules.pile(rules.deal(1), "stock")[-1]
            assert rules.pile(state, "stock")[-1] == first_dealt  # the same order every pass
    refuse(state, "waste-stock/43", "no redeals left")
