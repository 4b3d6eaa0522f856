"""Moves in a player's words (app/engine/words.py): what the board announces after a step or an
undo, and a finished game's moves on its replay page. Checked in English (``str`` of the words);
the web says the same words in the player's language."""

from __future__ import annotations

from app.engine import CardRef, State, Step, get_ruleset
from app.engine.cards import parse_code
from tests.engine.builders import play, position

PATRIARCHS_BASES = {
    **{f"f{i + 1}": "A" + s for i, s in enumerate("CDHS")},
    **{f"f{i + 5}": "K" + s for i, s in enumerate("CDHS")},
}
CORNERS_BASES = {"f1": "KC", "f2": "QD", "f3": "7H", "f4": "5S"}


def said(step: Step, auto: bool = False) -> list[str]:
    return [str(w) for w in get_ruleset(step.before.game).step_words(step, auto)]


def undone(step: Step) -> str:
    """The undo of ``step`` as the services build it: from the undone state back."""
    rules = get_ruleset(step.before.game)
    return str(rules.undo_words(Step(step.after, step.move, step.before, False, step.changed)))


# -- after a step --------------------------------------------------------------------------


def test_a_deal_names_the_card_dealt() -> None:
    step = play(position("quadrangle", f1="2C", t1="5D", stock="KS QS"), "stock-waste")
    assert said(step) == ["Dealt Q♠ to the waste."]


def test_a_redeal_counts_the_cards_and_names_the_reserves_it_fills() -> None:
    # C4: r1 and r4 are vacant; the waste's first card (3♠) is dealt first, to r1.
    state = position("corners", CORNERS_BASES, r2="9S", r3="9S", r5="9S", waste="3S 4H 6C")
    assert said(play(state, "waste-stock/3")) == [
        "Turned the waste over: 3 cards are back in the stock.",
        "Reserve r1 was filled with 3♠.",
        "Reserve r4 was filled with 4♥.",
    ]
    one = position(
        "corners", CORNERS_BASES, r1="9S", r2="9S", r3="9S", r4="9S", r5="9S", waste="3S"
    )
    assert said(play(one, "waste-stock")) == ["Turned the waste over: 1 card is back in the stock."]


def test_a_move_names_its_card_and_the_refill_of_its_pile() -> None:
    # Q4: t1 emptied is refilled from the waste top in the same step.
    step = play(position("quadrangle", f1="2C", t1="3C", waste="4D", stock="KS"), "t1-f1")
    assert said(step) == [
        "Moved 3♣ from pile t1 to foundation f1.",
        "Pile t1 was refilled with 4♦.",
    ]
    assert said(step, auto=True) == [
        "Auto-moved 3♣ from pile t1 to foundation f1.",
        "Pile t1 was refilled with 4♦.",
    ]
    # C3: a reserve is refilled from the stock top.
    corners = play(position("corners", CORNERS_BASES, r1="AC", stock="6D 8H"), "r1-f1")
    assert said(corners) == [
        "Moved A♣ from reserve r1 to foundation f1.",
        "Reserve r1 was refilled with 8♥.",
    ]


def test_a_run_is_named_by_its_ends_and_a_card_turned_up_by_itself() -> None:
    # I3 and I5: the run leaves Q♥ on top, turned up; K♥ beneath stays face down, unnamed.
    qi = "quadruple-interchange"
    step = play(position(qi, t1="(KH) (QH) 7S 6S 5S", t2="8S"), "t1-t2/3")
    assert said(step) == ["Moved 3 cards, 7♠ to 5♠, from pile t1 to pile t2.", "Q♥ turned face up."]
    assert "K♥" not in " ".join(said(step))
    # A card beneath that was already face up is not announced; an emptied pile says nothing.
    assert said(play(position(qi, t1="9D 7S 6S", t2="8S"), "t1-t2/2")) == [
        "Moved 2 cards, 7♠ to 6♠, from pile t1 to pile t2."
    ]
    assert said(play(position(qi, t1="6S", t2="8S 7S"), "t1-t2")) == [
        "Moved 6♠ from pile t1 to pile t2."
    ]


def test_the_english_description_is_the_sentences_joined() -> None:
    step = play(position("quadrangle", f1="2C", t1="3C", waste="4D", stock="KS"), "t1-f1")
    assert get_ruleset("quadrangle").describe(step) == (
        "Moved 3♣ from pile t1 to foundation f1. Pile t1 was refilled with 4♦."
    )


# -- after an undo -------------------------------------------------------------------------


def test_an_undo_names_the_cards_back_on_their_pile() -> None:
    step = play(position("quadrangle", f1="2C", t1="3C", waste="4D", stock="KS"), "t1-f1")
    assert undone(step) == "Took back a move: 3♣ is back on pile t1."
    run = play(position("quadruple-interchange", t1="9D 7S 6S", t2="8S"), "t1-t2/2")
    assert undone(run) == "Took back a move: 2 cards, 7♠ to 6♠, are back on pile t1."
    deal = play(position("quadrangle", f1="2C", t1="5D", stock="KS QS"), "stock-waste")
    assert undone(deal) == "Took back a move: Q♠ is back on the stock."


# -- a finished game's moves, every card named ---------------------------------------------


def replay(start: State, *log: str) -> list[str]:
    return get_ruleset(start.game).replay_words(start, list(log))


def test_replay_words_of_a_real_deal() -> None:
    # Corners deal 1 (rules.md §4): A♣ in r5 goes on K♣ (C1 wraps) and r5 takes the stock
    # top 9♣ (C3), so 5♣ is dealt next.
    rules = get_ruleset("corners")
    log = ["r5-f1", "stock-waste"]
    assert replay(rules.deal(1), *log) == ["A♣ to the ♣ foundation", "Dealt 5♣"]
    # The same as words for the web: stable codes, cards as parameters.
    words = rules.replay_words_of(rules.deal(1), log)
    assert [w.code for w in words] == ["replay_to_foundation", "replay_dealt"]
    assert words[1].params == {"card": CardRef(parse_code("5C"))}


def test_replay_words_onto_a_card_to_an_empty_pile_and_the_redeal() -> None:
    quadrangle = position("quadrangle", f1="2C", t1="5D 3C", t2="9H", t3="8H")
    assert replay(quadrangle, "t1-f1", "t3-t2", "t2-t3") == [
        "3♣ to the ♣ foundation",  # no label on Quadrangle's foundations: the card's suit
        "8♥ onto 9♥",
        "8♥ to the empty pile t3",
    ]
    corners = position("corners", CORNERS_BASES, r1="9S", waste="3S 4H")
    assert replay(corners, "waste-stock/2") == ["Turned the waste over"]


def test_replay_words_name_a_run_by_its_first_and_last_card() -> None:
    state = position("quadruple-interchange", t1="9D 7S 6S", t2="8S", t3="KD 7S 6S 5S")
    assert replay(state, "t1-t2/2", "t3-t4/3") == [
        "7♠–6♠ onto 8♠",
        "7♠–5♠ to the empty pile t4",
    ]


def test_replay_words_name_patriarchs_foundations_by_their_labels() -> None:
    # P5: ♣ meet at 6/7, so 6♣ may go from the Ace foundation onto the King foundation.
    piles = {**PATRIARCHS_BASES, "f1": "AC 2C 3C 4C 5C 6C", "f5": "KC QC JC TC 9C 8C 7C"}
    state = position("patriarchs", piles, r1="2D", stock="9S")
    assert replay(state, "r1-f2", "f1-f5") == [
        "2♦ to the ♦ A↑ foundation",
        "6♣ from the ♣ A↑ foundation to the ♣ K↓ foundation",
    ]
