"""Cards and rank arithmetic (rules.md §0, "Cards" and "Wrap arithmetic")."""

from __future__ import annotations

import pytest

from app.engine import Card
from app.engine.cards import (
    RANKS,
    SHOWN,
    SUITS,
    code_of,
    face,
    label_of,
    name_of,
    parse_code,
    pred,
    rank_of,
    succ,
    suit_of,
)


def test_card_parse_reads_rank_then_suit() -> None:
    assert Card.parse("TD") == Card(10, 1)
    assert Card.parse("AC") == Card(1, 0)
    assert Card.parse("KS") == Card(13, 3)
    assert Card.parse("7H").face == 2 * 13 + 6


@pytest.mark.parametrize("code", ["", "T", "10D", "1C", "td", "Td", "DT", "AX", "AC ", "ZZ"])
def test_card_parse_refuses_anything_but_a_code(code: str) -> None:
    with pytest.raises(ValueError, match="not a card code"):
        Card.parse(code)


def test_card_values_are_checked() -> None:
    for rank, suit in ((0, 0), (14, 0), (1, -1), (1, 4)):
        with pytest.raises(ValueError, match="no such card"):
            Card(rank, suit)


def test_codes_labels_and_names() -> None:
    ten = Card.parse("TD")
    assert (ten.code, ten.label, ten.name, str(ten)) == ("TD", "10♦", "10 of diamonds", "TD")
    assert Card.parse("AS").label == "A♠"
    assert Card.parse("QH").name == "queen of hearts"
    assert Card.parse("KC").label == "K♣"
    assert Card.parse("JC").name == "jack of clubs"


def test_every_face_round_trips() -> None:
    for suit, s in enumerate(SUITS):
        for rank, r in enumerate(RANKS, start=1):
            f = face(rank, suit)
            assert f == suit * 13 + rank - 1
            assert (rank_of(f), suit_of(f)) == (rank, suit)
            assert code_of(f) == r + s
            assert parse_code(r + s) == f
            assert Card.from_face(f) == Card(rank, suit)
            assert label_of(f) and name_of(f)


def test_succ_and_pred_wrap_as_the_rules_define() -> None:
    for r in range(1, 14):
        assert succ(r) == r % 13 + 1
        assert pred(r) == (r + 11) % 13 + 1
        assert pred(succ(r)) == r == succ(pred(r))
    assert succ(13) == 1 and succ(1) == 2 and succ(12) == 13
    assert pred(1) == 13 and pred(13) == 12 and pred(2) == 1


def test_cards_order_and_hash_as_values() -> None:
    assert Card.parse("2C") < Card.parse("3C")
    assert len({Card.parse("AS"), Card(1, 3)}) == 1


def test_a_viewer_is_shown_each_face_and_nothing_of_a_face_down_card() -> None:
    face_up = {face: code_of(face) for face in range(52)}
    face_down = {~face: None for face in range(52)}
    assert face_up | face_down == SHOWN
