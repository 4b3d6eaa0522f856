"""Move notation (rules.md §0 "Moves") and the shape checks every game shares."""

from __future__ import annotations

import pytest

from app.engine import GAMES, IllegalMove, InvalidMove, Move, get_ruleset
from tests.engine.builders import position


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("t3-f1", Move("t3", "f1", 1)),
        ("t2-t7/3", Move("t2", "t7", 3)),
        ("stock-waste", Move("stock", "waste", 1)),
        ("waste-stock/24", Move("waste", "stock", 24)),
        ("r9-f8", Move("r9", "f8")),
        ("t11-f16", Move("t11", "f16")),
        ("t1-t2/121", Move("t1", "t2", 121)),
    ],
)
def test_notation_parses_and_prints_back(text: str, move: Move) -> None:
    assert Move.parse(text) == move
    assert str(move) == text
    assert Move.parse(str(move)) == move


def test_a_count_of_one_is_left_out_when_printed() -> None:
    assert str(Move.parse("t2-t7/1")) == "t2-t7"
    assert Move.parse("  t3-f1 ") == Move("t3", "f1")


@pytest.mark.parametrize(
    "text",
    [
        "", "t3", "t3-", "-f1", "t3f1", "t3 - f1", "T3-F1", "x1-t2", "t0-t1", "t100-t1",
        "t2-t7/0", "t2-t7/-1", "t2-t7/", "t2-t7/1000", "t2-t7/03", "stock-waste-t1", "t3-f1/a",
    ],
)  # fmt: skip
def test_bad_notation_raises_invalid_move(text: str) -> None:
    with pytest.raises(InvalidMove) as refused:
        Move.parse(text)
    message = str(refused.value)
    assert message.startswith(f"{text!r} is not a move; ")
    assert message.endswith("write it as from-to, e.g. t3-f1, or t2-t7/3 for 3 cards.")


@pytest.mark.parametrize(
    ("slug", "move"),
    [
        ("quadrangle", Move("t13", "f1")),
        ("quadrangle", Move("t1", "r1")),
        ("quadruple-interchange", Move("t1", "f17")),
        ("corners", Move("r6", "f1")),
        ("corners", Move("t1", "f1")),
        ("castles-end", Move("stock", "waste")),
        ("castles-end", Move("t1", "waste")),
        ("patriarchs", Move("r10", "f1")),
        ("patriarchs", Move("", "f1")),
    ],
)
def test_unknown_pile_raises_invalid_move(slug: str, move: Move) -> None:
    rules = get_ruleset(slug)
    with pytest.raises(InvalidMove, match=f"{rules.name} has no pile called"):
        rules.apply(rules.deal(1), move)


@pytest.mark.parametrize("slug", sorted(GAMES))
@pytest.mark.parametrize("count", [0, -1, -5, True])
def test_count_below_one_raises_invalid_move(slug: str, count: int) -> None:
    rules = get_ruleset(slug)
    state = rules.deal(1)
    source = next(p.id for p in rules.layout.piles if rules.pile(state, p.id))
    target = next(pid for pid in rules.pile_ids if pid != source)
    with pytest.raises(InvalidMove, match="must be 1 or more"):
        rules.apply(state, Move(source, target, count))


def test_moving_from_an_empty_pile_is_illegal() -> None:
    rules = get_ruleset("quadrangle")
    state = position("quadrangle", f1="2C", t1="3C")
    for move, pile in ((Move("t2", "t1"), "Pile t2"), (Move("waste", "t1"), "The waste")):
        with pytest.raises(IllegalMove) as refused:
            rules.apply(state, move)
        assert str(refused.value) == f"{pile} is empty."
    with pytest.raises(IllegalMove, match=r"^The stock is empty\.$"):
        rules.apply(state, Move("stock", "waste"))


def test_a_count_larger_than_the_pile_is_illegal() -> None:
    rules = get_ruleset("quadruple-interchange")
    state = position("quadruple-interchange", t1="9S 8S", t2="TS", waste="3C")
    for move, expected in (
        (Move("t1", "t2", 3), "Pile t1 holds only 2 cards."),
        (Move("waste", "t3", 2), "The waste holds only 1 card."),
    ):
        with pytest.raises(IllegalMove) as refused:
            rules.apply(state, move)
        assert str(refused.value) == expected
        assert move not in rules.legal_moves(state)
