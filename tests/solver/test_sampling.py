"""What the player can see, and arrangements of what they cannot (app/solver/sampling.py):
hidden cards put back in a fixed order, and orders of them drawn from the visible position
only, so that equal views give equal arrangements whatever the real order."""

from __future__ import annotations

from collections import Counter

from app.engine import State, get_ruleset
from app.solver.sampling import (
    _Stream,
    arrangements,
    fully_visible,
    sample_seed,
    stock_hidden,
    visible_only,
)
from tests.engine.builders import cards, position

CORNERS = {"f1": "KC", "f2": "QD", "f3": "7H", "f4": "5S"}


def hidden_cards(state: State) -> Counter[int]:
    """Every card the player cannot see: face-down ones, and the stock while it is hidden."""
    rules = get_ruleset(state.game)
    out = Counter(~c for pile in state.piles for c in pile if c < 0)
    if stock_hidden(state):
        out.update(state.piles[rules.stock])
    return out


def test_the_stock_is_hidden_until_it_has_been_turned_over() -> None:
    fresh = position("corners", CORNERS, stock="9H 4D")
    assert stock_hidden(fresh) and not fully_visible(fresh)
    redealt = position("corners", CORNERS, redeals=1, stock="9H 4D")
    assert not stock_hidden(redealt) and fully_visible(redealt)
    assert not stock_hidden(position("corners", CORNERS, waste="9H"))  # nothing in it
    castles = get_ruleset("castles-end").deal(1)
    assert not stock_hidden(castles) and fully_visible(castles)  # no stock at all


def test_a_face_down_card_keeps_a_position_from_being_fully_visible() -> None:
    state = position("quadruple-interchange", t1="(AC) 5C", t2="6D")
    assert not stock_hidden(state) and not fully_visible(state)
    assert fully_visible(position("quadruple-interchange", t1="AC 5C", t2="6D"))


def test_visible_only_puts_the_hidden_cards_back_sorted_face_down_places_first() -> None:
    state = position("quadruple-interchange", t1="(9S) 5C", t2="(2H) (KD) 6D", stock="AC 3C")
    masked = visible_only(state)
    qi = get_ruleset("quadruple-interchange")
    # The hidden cards sorted by face (A♣ 3♣ K♦ 2♥ 9♠): the face-down places first, then the stock.
    order = sorted([*cards("9S 2H KD"), *cards("AC 3C")])
    assert qi.pile(masked, "t1") == (~order[0], cards("5C")[0])
    assert qi.pile(masked, "t2") == (~order[1], ~order[2], cards("6D")[0])
    assert qi.pile(masked, "stock") == tuple(order[3:])
    assert hidden_cards(masked) == hidden_cards(state)
    assert qi.public_view(masked) == qi.public_view(state)
    assert visible_only(masked) == masked


def test_positions_that_look_the_same_have_one_visible_form_and_one_seed() -> None:
    one = position("quadruple-interchange", t1="(9S) 5C", t2="(2H) 6D", stock="AC 3C")
    other = position("quadruple-interchange", t1="(3C) 5C", t2="(AC) 6D", stock="2H 9S")
    assert visible_only(one) == visible_only(other)
    assert sample_seed(visible_only(one)) == sample_seed(visible_only(other))
    moved = position("quadruple-interchange", t1="(9S) 5C", t2="(2H) 6D", waste="AC", stock="3C")
    assert sample_seed(visible_only(moved)) != sample_seed(visible_only(one))


def test_a_fully_visible_position_is_its_own_visible_form() -> None:
    state = position("corners", CORNERS, redeals=1, r1="8D", waste="2C", stock="9H 4D")
    assert visible_only(state) == state
    assert arrangements(state, 3) == [state, state, state]


def test_arrangements_move_only_hidden_cards_among_hidden_places() -> None:
    state = get_ruleset("quadruple-interchange").deal(5)
    qi = get_ruleset("quadruple-interchange")
    drawn = arrangements(state, 4)
    assert len(drawn) == 4
    for other in drawn:
        assert qi.public_view(other) == qi.public_view(state)  # the same in every seen card
        assert hidden_cards(other) == hidden_cards(state)  # the same cards hidden
        assert len(qi.pile(other, "stock")) == len(qi.pile(state, "stock"))
    assert len({a.piles for a in drawn}) == 4  # 95 hidden cards: four different orders


def test_arrangements_depend_on_the_visible_position_only() -> None:
    one = position("quadruple-interchange", t1="(9S) 5C", t2="(2H) 6D", stock="AC 3C 7H 8H")
    other = position("quadruple-interchange", t1="(8H) 5C", t2="(7H) 6D", stock="9S 2H 3C AC")
    assert arrangements(one, 5) == arrangements(other, 5)
    assert arrangements(one, 5)[:2] == arrangements(one, 2)  # a stream: more draws extend it


def test_the_stream_draws_uniformly_below_a_bound_and_shuffles_to_a_permutation() -> None:
    stream = _Stream(b"seed")
    draws = [stream.below(6) for _ in range(600)]
    assert set(draws) == set(range(6))
    assert all(70 <= draws.count(k) <= 130 for k in range(6))  # fixed seed: fixed counts
    items = list(range(20))
    _Stream(b"seed").shuffle(items)
    assert sorted(items) == list(range(20)) and items != list(range(20))
    again = list(range(20))
    _Stream(b"seed").shuffle(again)
    assert again == items
    other = list(range(20))
    _Stream(b"other").shuffle(other)
    assert other != items
