"""The foundation-building checks (app/engine/building.py): None where a card fits, else the
reason as words, for up-in-suit foundations (with or without wrap) and Patriarchs' down ones."""

from __future__ import annotations

from app.engine import CardRef, RankRef
from app.engine.building import (
    FOUNDATION_SIZE,
    down_in_suit_refusal,
    fits_up_in_suit,
    up_in_suit_refusal,
)
from app.engine.cards import SUITS, face, parse_code
from app.engine.state import Pile


def cards(text: str) -> Pile:
    return tuple(parse_code(code) for code in text.split())


def card(code: str) -> int:
    return parse_code(code)


def test_an_empty_foundation_takes_its_start_rank_only() -> None:
    assert up_in_suit_refusal(card("5H"), (), wrap=True, start=5) is None
    why = up_in_suit_refusal(card("6H"), (), wrap=True, start=5)
    assert why is not None
    assert why.code == "foundation_start"
    assert why.params == {"rank": RankRef(5)}
    assert str(why) == "Only a 5 can start an empty foundation."


def test_an_empty_foundation_without_a_start_takes_any_card() -> None:
    # Castle's End before its base is chosen: the first card chooses it.
    assert up_in_suit_refusal(card("9C"), (), wrap=True, start=None) is None


def test_up_in_suit_takes_the_next_rank_of_the_suit() -> None:
    assert up_in_suit_refusal(card("7S"), cards("5S 6S"), wrap=False, start=None) is None
    why = up_in_suit_refusal(card("8S"), cards("5S 6S"), wrap=False, start=None)
    assert why is not None and why.code == "foundation_up_by_one"
    assert why.params["needed"] == CardRef(card("7S"))
    assert "only 7♠ goes there" in str(why)


def test_up_in_suit_refuses_another_suit_before_its_rank() -> None:
    why = up_in_suit_refusal(card("7H"), cards("5S 6S"), wrap=True, start=5)
    assert why is not None and why.code == "foundation_suit"
    assert str(why) == "7♥ cannot go on 6♠: foundations build up in suit."


def test_with_wrap_an_ace_follows_a_king_and_without_it_nothing_does() -> None:
    on_king = cards("QD KD")
    assert up_in_suit_refusal(card("AD"), on_king, wrap=True, start=12) is None
    why = up_in_suit_refusal(card("2D"), on_king, wrap=True, start=12)
    assert why is not None and why.code == "foundation_up_by_one"
    assert why.params["needed"] == CardRef(card("AD"))  # the wrap names the Ace, not "K+1"
    why = up_in_suit_refusal(card("AD"), on_king, wrap=False, start=None)
    assert why is not None and why.code == "foundation_king_last"
    assert str(why) == "K♦ is the last card of that foundation: nothing goes on a King."


def test_a_complete_foundation_refuses_every_card() -> None:
    full = cards("8C 9C TC JC QC KC AC 2C 3C 4C 5C 6C 7C")
    assert len(full) == FOUNDATION_SIZE
    # 8♣ would fit after 7♣ by rank and suit: only the count stops it (the 14th card).
    why = up_in_suit_refusal(card("8C"), full, wrap=True, start=8)
    assert why is not None and why.code == "foundation_complete"
    assert why.params == {"size": 13}
    down = cards("KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS")
    refused = down_in_suit_refusal(card("KS"), down)
    assert refused is not None and refused.code == "foundation_complete"


def test_down_in_suit_takes_the_rank_below_in_the_suit() -> None:
    assert down_in_suit_refusal(card("JC"), cards("KC QC")) is None
    why = down_in_suit_refusal(card("TC"), cards("KC QC"))
    assert why is not None and why.code == "foundation_down_by_one"
    assert why.params["needed"] == CardRef(card("JC"))
    why = down_in_suit_refusal(card("JH"), cards("KC QC"))
    assert why is not None and why.code == "foundation_down_suit"
    assert str(why) == "J♥ cannot go on Q♣: foundations build in suit."


def test_the_quick_check_agrees_with_the_reasons_everywhere() -> None:
    # Every card on every top (and on an empty pile, and a full one), with and without wrap,
    # for every start rank: what legal moves ask (Castle's End) is what a refused move says.
    deck = [face(rank, suit) for suit in range(len(SUITS)) for rank in range(1, 14)]
    piles: list[Pile] = [(), *((top,) for top in deck)]
    piles.append(tuple(face(rank, 0) for rank in range(1, FOUNDATION_SIZE + 1)))
    checked = 0
    for pile in piles:
        for card_ in deck:
            for wrap in (True, False):
                for start in (None, *range(1, 14)):
                    fits = fits_up_in_suit(card_, pile, wrap=wrap, start=start)
                    assert fits == (up_in_suit_refusal(card_, pile, wrap=wrap, start=start) is None)
                    checked += fits
    assert checked > 0
