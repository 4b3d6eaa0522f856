"""Reasons and words as data (app/engine/reasons.py), in their English form: what ``str()`` of
a refusal or an announcement says (the web renders the same template in other languages)."""

from __future__ import annotations

from app.engine import CardsRef, PileRef, RangeRef, RankRef, ShareRef, Words
from app.engine.cards import parse_code


def test_parameters_in_english() -> None:
    seven, five = parse_code("7S"), parse_code("5S")
    assert str(CardsRef((seven,))) == "7♠"
    assert str(CardsRef((seven, parse_code("6S"), five))) == "3 cards, 7♠ to 5♠,"
    assert str(RangeRef(seven, five)) == "7♠–5♠"
    assert [str(RankRef(r)) for r in (1, 7, 8, 10, 11)] == ["an A", "a 7", "an 8", "a 10", "a J"]
    assert [str(PileRef(k, i)) for k, i in (("stock", "stock"), ("reserve", "r2"))] == [
        "the stock",
        "reserve r2",
    ]
    assert [str(ShareRef(f)) for f in (0.0, 0.4, 0.257, 1.0)] == ["0%", "40%", "26%", "100%"]


def test_words_choose_the_plural_by_count_and_open_with_a_capital() -> None:
    forms = ("%(pile)s holds only %(n)s card.", "%(pile)s holds only %(n)s cards.")
    for n, text in ((1, "The waste holds only 1 card."), (2, "The waste holds only 2 cards.")):
        words = Words(
            "pile_holds_fewer", forms[0], {"pile": PileRef("waste", "waste"), "n": n}, forms[1], n
        )
        assert str(words) == words.english() == text
