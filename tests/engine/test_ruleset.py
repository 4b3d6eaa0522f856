"""What every game shares (app/engine/ruleset.py): checking a move's shape before the game's own
rules, the step it makes, redeals, and the views of a state. The conventions of rules.md §0 on
real deals are in test_conventions.py; each game's own rules in games/."""

from __future__ import annotations

import pytest

from app.engine import (
    GAMES,
    IllegalMove,
    InvalidMove,
    Move,
    ShownPile,
    State,
    Words,
    get_ruleset,
)
from app.engine.ruleset import Ruleset, fail, refuse
from tests.engine.builders import position

CORNERS = get_ruleset("corners")
BASES = {"f1": "KC", "f2": "QD", "f3": "7H", "f4": "5S"}


def corners(redeals: int = 0, /, **piles: str) -> State:
    return position("corners", redeals=redeals, **{**BASES, **piles})


def refusal(rules: Ruleset, state: State, move: Move) -> IllegalMove:
    with pytest.raises(IllegalMove) as refused:
        rules.step(state, move)
    return refused.value


@pytest.mark.parametrize("count", [0, -1, True, "2", 1.0])
def test_a_count_that_is_not_a_whole_number_above_zero_is_not_a_move(count: object) -> None:
    state = corners(r1="8D", waste="2C 3C")
    with pytest.raises(InvalidMove) as refused:
        CORNERS.step(state, Move("waste", "f1", count))  # type: ignore[arg-type]
    assert refused.value.code == "bad_count"


@pytest.mark.parametrize("pile", ["t1", "f9", "", None, ["r1"]])
def test_a_pile_the_game_does_not_have_is_not_a_move(pile: object) -> None:
    with pytest.raises(InvalidMove) as refused:
        CORNERS.step(corners(r1="8D"), Move(pile, "f1"))  # type: ignore[arg-type]
    assert refused.value.code == "no_such_pile"
    assert str(refused.value) == f"Corners has no pile called {pile!r}."


def test_the_shape_of_a_move_is_checked_before_the_games_rules() -> None:
    state = corners(r1="8D", waste="2C 3C")
    assert refusal(CORNERS, state, Move("r1", "r1")).code == "same_pile"
    assert refusal(CORNERS, state, Move("r2", "f2")).code == "pile_empty"
    too_many = refusal(CORNERS, state, Move("waste", "f1", 3))
    assert too_many.code == "pile_holds_fewer"
    assert str(too_many) == "The waste holds only 2 cards."
    assert str(refusal(CORNERS, state, Move("r1", "f2", 2))) == "Reserve r1 holds only 1 card."


def test_a_step_reports_the_piles_it_changed_in_layout_order_and_what_it_revealed() -> None:
    # A♣ from the reserve goes home and the stock's top refills the reserve (C3): three piles.
    state = corners(r1="AC", stock="9H 4D")
    step = CORNERS.step(state, Move("r1", "f1"))
    assert step.changed == ("stock", "f1", "r1")
    assert step.revealed is True  # the refill came from the hidden stock
    assert step.before is state and step.after.redeals == 0
    quiet = CORNERS.step(state, Move("stock", "waste"))
    assert quiet.changed == ("stock", "waste")


def test_only_a_redeal_counts_as_a_redeal() -> None:
    reserves = {f"r{i}": code for i, code in enumerate(("2D", "3D", "4H", "5H", "6C"), 1)}
    state = corners(waste="9H 4D 6S", **reserves)
    turned = CORNERS.apply(state, Move("waste", "stock", 3))
    assert turned.redeals == 1 and CORNERS.redeals_left(turned) == 1
    dealt = CORNERS.apply(turned, Move("stock", "waste"))
    assert dealt.redeals == 1
    assert get_ruleset("quadrangle").redeals_left(get_ruleset("quadrangle").deal(1)) is None


def test_a_redeal_is_offered_only_with_the_stock_empty_the_waste_not_and_one_left() -> None:
    waste = corners(waste="9H 4D 6S")
    assert CORNERS.redeal_moves(waste) == [Move("waste", "stock", 3)]
    assert CORNERS.redeal_moves(corners(waste="9H 4D", stock="6S")) == []
    assert CORNERS.redeal_moves(corners()) == []
    assert CORNERS.redeal_moves(corners(2, waste="9H 4D 6S")) == []


def test_a_redeal_turns_the_whole_waste_over_while_redeals_are_left() -> None:
    patriarchs = get_ruleset("patriarchs")
    state = position("patriarchs", f1="AC", f5="KC", waste="9H 4D 6S")
    after = patriarchs.apply(state, Move("waste", "stock", 3))
    assert after.piles[patriarchs.stock] == state.piles[patriarchs.waste][::-1]  # 9♥ dealt next
    assert refusal(patriarchs, state, Move("waste", "stock", 2)).code == "redeal_whole_waste"
    used = State(state.game, state.piles, redeals=1)
    spent = refusal(patriarchs, used, Move("waste", "stock", 3))
    assert spent.code == "no_redeals_left"
    assert str(spent) == "No redeals left: Patriarchs allows redealing only once."
    assert str(refusal(CORNERS, corners(2, waste="9H"), Move("waste", "stock"))) == (
        "No redeals left: Corners allows redealing only 2 times."
    )
    stocked = position("patriarchs", f1="AC", f5="KC", waste="9H", stock="4D")
    assert refusal(patriarchs, stocked, Move("waste", "stock")).code == "redeal_stock_not_empty"


def test_the_shared_redeal_refuses_a_game_that_has_none() -> None:
    # Quadrangle refuses waste → stock in its own words first; the shared helper still holds.
    quadrangle = get_ruleset("quadrangle")
    state = position("quadrangle", f1="2H", waste="5D")
    with pytest.raises(IllegalMove) as refused:
        quadrangle._turn_waste_over(list(state.piles), state, 1)
    assert refused.value.code == "no_redeal"
    assert "Quadrangle has no redeal" in str(refused.value)


def test_the_stock_deals_one_card_to_the_waste_only() -> None:
    state = corners(r1="8D", stock="9H 4D")
    assert refusal(CORNERS, state, Move("stock", "r2")).code == "stock_to_waste"
    assert refusal(CORNERS, state, Move("stock", "waste", 2)).code == "stock_one_at_a_time"


def test_replay_is_the_moves_applied_in_turn() -> None:
    state = corners(r1="AC", stock="9H 4D 2C")
    moves = [Move("stock", "waste"), Move("r1", "f1"), Move("waste", "f1")]
    one_by_one = state
    for move in moves:
        one_by_one = CORNERS.apply(one_by_one, move)
    assert CORNERS.replay(state, moves) == one_by_one
    assert CORNERS.replay(state, []) == state
    assert len(CORNERS.pile(one_by_one, "f1")) == 3


def test_the_public_view_shows_the_stock_by_its_size_and_face_down_cards_as_none() -> None:
    qi = get_ruleset("quadruple-interchange")
    state = position("quadruple-interchange", t1="(AC) 5C", stock="9H 4D", waste="2S")
    view = qi.public_view(state, only={"t1", "stock", "waste"})
    assert view == {
        "stock": ShownPile(None, 2),
        "waste": ShownPile(("2S",), 1),
        "t1": ShownPile((None, "5C"), 2),
    }
    assert ShownPile.of([None, "5C"]) == view["t1"] and ShownPile.counted(2) == view["stock"]
    full = qi.full_view(state)
    assert full["t1"] == ["AC", "5C"] and full["stock"] == ["9H", "4D"]
    assert set(qi.public_view(state)) == set(qi.pile_ids)


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_every_game_knows_its_piles_by_kind(slug: str) -> None:
    rules = get_ruleset(slug)
    assert rules.cards == 52 * rules.decks
    for i, pid in enumerate(rules.pile_ids):
        assert rules.pile_index(pid) == i
        assert rules.pile_ref(i).id == pid and rules.pile_ref(i).kind == rules.kind(i).value
    assert rules.stock == (rules.pile_ids.index("stock") if "stock" in rules.pile_ids else -1)
    assert set(rules.foundations) == {i for i, p in enumerate(rules.pile_ids) if p[0] == "f"}
    assert set(rules.tableau) == {i for i, p in enumerate(rules.pile_ids) if p[0] == "t"}


def test_fail_and_refuse_raise_an_illegal_move_with_the_reason_as_data() -> None:
    with pytest.raises(IllegalMove) as raised:
        fail("no_way", "Not %(what)s.", what="now")
    assert (raised.value.code, str(raised.value)) == ("no_way", "Not now.")
    why = Words("foundation_start", "Only %(rank)s can start it.", {"rank": "an A"})
    with pytest.raises(IllegalMove) as raised:
        refuse(why)
    assert raised.value.words == why
