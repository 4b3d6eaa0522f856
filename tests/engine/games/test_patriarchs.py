"""Patriarchs, rules.md §6: rules P1–P6 and the §7 scenarios about transfers and the redeal."""

from __future__ import annotations

from collections import Counter

from app.engine import DEVELOPMENT_KEY, Move, State, get_ruleset
from app.engine.cards import RANKS, face
from app.engine.deals import shuffled
from tests.engine.builders import moves, play, position, refuse, show

GAME = "patriarchs"
rules = get_ruleset(GAME)


def run(suit: str, ranks: str) -> str:
    """Cards of one suit, e.g. ``run("C", "A23")`` → ``"AC 2C 3C"``."""
    return " ".join(r + suit for r in ranks)


BASES = {
    **{f"f{i + 1}": "A" + s for i, s in enumerate("CDHS")},
    **{f"f{i + 5}": "K" + s for i, s in enumerate("CDHS")},
}


def patriarchs(redeals: int = 0, **piles: str) -> State:
    """A Patriarchs position: the eight bottom Aces and Kings unless given."""
    return position(GAME, redeals=redeals, **{**BASES, **piles})


def test_deal_first_decks_aces_and_kings_then_96_shuffled_cards() -> None:
    deck = rules.deck()
    assert len(deck) == 96
    assert Counter(deck) == Counter(
        [c for c in range(52) if c % 13 not in (0, 12)] + list(range(52))
    )
    cards = shuffled(DEVELOPMENT_KEY, GAME, 12, deck)
    state = rules.deal(12)
    for s in range(4):
        assert rules.pile(state, f"f{s + 1}") == (face(1, s),)
        assert rules.pile(state, f"f{s + 5}") == (face(13, s),)
    for i in range(9):
        assert rules.pile(state, f"r{i + 1}") == (cards[i],)
    assert rules.pile(state, "stock") == tuple(reversed(cards[9:]))  # card 9 on top
    assert len(rules.pile(state, "stock")) == 87
    assert rules.pile(state, "waste") == ()
    assert Counter(c for pile in state.piles for c in pile) == dict.fromkeys(range(52), 2)


# -- P1 foundations ------------------------------------------------------------------------


def test_P1_ace_foundations_build_up_in_suit() -> None:
    state = patriarchs(f1=run("C", "A2"), r1="3C", r2="3D", r3="4C", stock="9S")
    assert show(play(state, "r1-f1").after, "f1") == "AC 2C 3C"
    refuse(state, "r2-f1", "3♦", "foundation f1", "♣ only")
    refuse(state, "r3-f1", "4♣", "up by one in suit", "only 3♣")


def test_P1_king_foundations_build_down_in_suit() -> None:
    state = patriarchs(f5=run("C", "KQ"), r1="JC", r2="TC", r3="KC", waste="JH")
    assert show(play(state, "r1-f5").after, "f5") == "KC QC JC"
    refuse(state, "r2-f5", "10♣", "builds down by one in suit", "only J♣")
    refuse(state, "r3-f5", "K♣", "builds down by one in suit")
    refuse(state, "waste-f5", "J♥", "♣ only")


def test_P1_no_wrap_and_13_cards_each() -> None:
    state = patriarchs(r1="KC", r2="AC")
    refuse(state, "r1-f1", "K♣", "only 2♣")  # no K on the Ace …
    refuse(state, "r2-f5", "A♣", "only Q♣")  # … and no A on the King
    full = patriarchs(f1=run("C", RANKS), f5=run("C", RANKS[::-1]), r1="AC", r2="KC")
    refuse(full, "r1-f1", "complete", "13 cards")
    refuse(full, "r2-f5", "complete", "13 cards")
    assert show(play(patriarchs(f1=run("C", RANKS[:-1]), r1="KC"), "r1-f1").after, "f1") == (
        run("C", RANKS)
    )


# -- P2 where cards go ---------------------------------------------------------------------


def test_P2_reserve_and_waste_tops_go_to_foundations_and_nowhere_else() -> None:
    state = patriarchs(r1="2C", r2="QH", r3="5S", waste="7D 2D", stock="9S")
    assert {"r1-f1", "r2-f7", "waste-f2"} <= moves(state)
    refuse(state, "r3-r4", "only to the foundations", "nothing may be put on a reserve")
    refuse(state, "r3-r1", "only to the foundations")
    refuse(state, "waste-r4", "nothing may be put on a reserve")
    refuse(state, "r3-waste", "only the stock deals to the waste")
    refuse(state, "stock-r4", "dealt to the waste")
    assert moves(state) == {"stock-waste", "r1-f1", "r2-f7", "waste-f2"}


# -- P3 refill -----------------------------------------------------------------------------


def test_P3_emptied_reserve_is_refilled_from_the_waste_top() -> None:
    state = patriarchs(r1="2C", waste="9D 5H", stock="4S")
    step = play(state, "r1-f1")
    assert show(step.after, "r1") == "5H"
    assert show(step.after, "waste") == "9D"
    assert show(step.after, "stock") == "4S"
    assert step.changed == ("waste", "f1", "r1")
    assert step.revealed is False


def test_P3_refilled_from_the_stock_top_when_the_waste_is_empty() -> None:
    state = patriarchs(r1="2C", stock="4S 6H")
    step = play(state, "r1-f1")
    assert show(step.after, "r1") == "6H"
    assert show(step.after, "stock") == "4S"
    assert step.revealed is True


def test_P3_stays_empty_when_both_are_empty_and_nothing_may_be_put_there() -> None:
    state = patriarchs(f1=run("C", "A2"), r1="2C", r2="3C", r3="QS")
    step = play(state, "r2-f1")
    assert show(step.after, "r2") == ""
    assert step.revealed is False
    refuse(step.after, "r3-r2", "nothing may be put on a reserve")
    refuse(step.after, "f1-r2", "only to the other foundation of its own suit")


# -- P4 dealing and the redeal -------------------------------------------------------------


def test_P4_stock_dealt_one_card_at_a_time_whenever_the_player_likes() -> None:
    state = patriarchs(r1="2C", stock="4S 6H")
    step = play(state, "stock-waste")  # though 2♣ could go up
    assert show(step.after, "waste") == "6H"
    assert step.revealed is True
    refuse(state, "stock-waste/2", "one card at a time")


def test_P4_one_redeal_turns_the_waste_over_without_shuffling() -> None:
    state = patriarchs(r1="5S", waste="2S 3H 4D")
    assert rules.redeals_left(state) == 1
    step = play(state, "waste-stock/3")
    assert show(step.after, "stock") == "4D 3H 2S"  # 2♠ went to the waste first: dealt first
    assert show(step.after, "waste") == ""
    assert step.after.redeals == 1
    assert step.revealed is False


def test_P4_redeal_only_when_the_stock_is_empty_and_the_waste_is_not() -> None:
    refuse(patriarchs(waste="2S", stock="5C"), "waste-stock", "only when the stock is empty")
    refuse(patriarchs(waste="2S 4S"), "waste-stock", "whole waste")
    assert not any(m.startswith("waste-stock") for m in moves(patriarchs(r1="5S")))


def test_P4_second_redeal_refused() -> None:
    """§7: a second Patriarchs redeal refused."""
    state = patriarchs(redeals=1, waste="2S 3H 4D")
    assert rules.redeals_left(state) == 0
    refuse(state, "waste-stock/3", "no redeals left", "only once")


def test_P4_two_passes_through_a_real_deal() -> None:
    state = rules.deal(1)
    for _ in range(2):
        while rules.pile(state, "stock"):
            state = rules.apply(state, Move("stock", "waste"))
        if state.redeals == 0:
            state = play(state, f"waste-stock/{len(rules.pile(state, 'waste'))}").after
    assert len(rules.pile(state, "waste")) == 87
    refuse(state, "waste-stock/87", "no redeals left")


# -- P5 transfers --------------------------------------------------------------------------


def test_P5_transfer_slides_the_meeting_point_down_to_the_bottom_ace() -> None:
    """§7: a transfer sliding the meeting point down, refusing to move the Ace itself."""
    state = patriarchs(f1=run("C", "A23"), f5=run("C", "KQJT987654"), r1="9S")
    assert {"f1-f5", "f5-f1"} <= moves(state)  # a = 3 and k = 4 meet
    state = play(state, "f1-f5").after
    assert show(state, "f5").endswith("4C 3C")
    state = play(state, "f1-f5").after
    assert show(state, "f1") == "AC"
    assert show(state, "f5").endswith("3C 2C")
    refuse(state, "f1-f5", "bottom Ace", "never moves")
    assert moves(state) == {"f5-f1"}  # the way back up is still open
    assert show(play(state, "f5-f1").after, "f1") == "AC 2C"


def test_P5_the_bottom_king_never_moves() -> None:
    state = patriarchs(f1=run("C", RANKS[:-1]), r1="9S")  # a = Q, k = K: they meet
    assert moves(state) == {"f1-f5"}
    refuse(state, "f5-f1", "bottom King", "never moves")


def test_P5_transfers_refused_across_a_gap() -> None:
    """§7: transfers refused across a gap."""
    state = patriarchs(f1=run("C", "A23"), f5=run("C", "KQJT9876"), r1="9S")  # a = 3, k = 6
    refuse(state, "f1-f5", "only where they meet", "3♣", "6♣")
    refuse(state, "f5-f1", "only where they meet")


def test_P5_transfers_refused_across_an_overlap() -> None:
    """§7: transfers refused across an overlap (two decks: both foundations pass the middle)."""
    over = patriarchs(f1=run("C", "A23456"), f5=run("C", "KQJT98765"), r1="9S")  # a=6, k=5
    refuse(over, "f1-f5", "only where they meet")
    refuse(over, "f5-f1", "only where they meet")
    level = patriarchs(f1=run("C", "A2345"), f5=run("C", "KQJT98765"), r1="9S")  # a = k = 5
    refuse(level, "f1-f5", "only where they meet")
    refuse(level, "f5-f1", "only where they meet")
    assert not {m for m in moves(over) | moves(level) if m.startswith("f")}


def test_P5_transfers_only_between_the_two_foundations_of_a_suit() -> None:
    state = patriarchs(f1=run("C", "A23"), f5=run("C", "KQJT987654"), f6=run("D", "KQ"))
    refuse(state, "f1-f6", "other foundation of its own suit")
    refuse(state, "f1-f2", "other foundation of its own suit")
    refuse(state, "f1-r1", "other foundation of its own suit")
    refuse(state, "f1-waste", "other foundation of its own suit")
    refuse(state, "f1-f5/2", "one at a time")


# -- P6 a card that fits both foundations --------------------------------------------------


def test_P6_a_card_that_fits_both_foundations_is_offered_to_both() -> None:
    """§7: a card that fits both Patriarchs foundations offered to both."""
    state = patriarchs(f1=run("C", "A234"), f5=run("C", "KQJT9876"), r1="5C", stock="9S")
    assert {"r1-f1", "r1-f5"} <= moves(state)
    assert show(play(state, "r1-f1").after, "f1") == run("C", "A2345")
    assert show(play(state, "r1-f5").after, "f5") == run("C", "KQJT98765")


def test_P6_the_card_is_never_routed_automatically() -> None:
    state = patriarchs(f1=run("C", "A234"), f5=run("C", "KQJT9876"), r1="9S", stock="5C")
    step = play(state, "stock-waste")
    assert show(step.after, "waste") == "5C"
    assert step.changed == ("stock", "waste")
    assert {"waste-f1", "waste-f5"} <= moves(step.after)
