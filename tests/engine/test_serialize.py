"""The stored text form of a state: round trips, and damaged rows failing loudly."""

from __future__ import annotations

import pytest

from app.engine import GAMES, CorruptState, Move, State, dumps, get_ruleset, loads
from app.engine.cards import RANKS, SUITS

DEAL = Move("stock", "waste")


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_a_fresh_deal_round_trips(slug: str) -> None:
    state = get_ruleset(slug).deal(8)
    text = dumps(state)
    assert text.startswith(f"1:{slug}:0:")
    assert loads(text) == state


def test_face_down_cards_keep_their_side() -> None:
    state = get_ruleset("quadruple-interchange").deal(1)
    text = dumps(state)
    assert ",5CAc6HKh7SQc8S2dJCTdTS," in text
    restored = loads(text)
    assert restored == state
    assert sum(c < 0 for pile in restored.piles for c in pile) == 55


def _code(face: int) -> str:
    return RANKS[face % 13] + SUITS[face // 13]


@pytest.mark.parametrize("card", [*range(52), *(~face for face in range(52))])
def test_every_card_value_has_its_documented_text(card: int) -> None:
    """Each of the 104 values a pile can hold: its face's code, the suit lower-cased when it
    lies face down; and back again."""
    face = card if card >= 0 else ~card
    text = _code(face) if card >= 0 else _code(face)[0] + _code(face)[1].lower()
    rest = [c for c in range(52) if c != face]  # so that the state holds a whole game
    piles = len(get_ruleset("corners").pile_ids)
    state = State("corners", ((card,), tuple(rest)) + ((),) * (piles - 2))
    stored = dumps(state)
    assert stored == f"1:corners:0:{text},{''.join(map(_code, rest))}" + "," * (piles - 2)
    assert loads(stored) == state


def test_a_game_in_play_with_redeals_used_round_trips() -> None:
    rules = get_ruleset("corners")
    state = rules.deal(1)
    for _ in range(2):
        while rules.pile(state, "stock"):
            state = rules.apply(state, DEAL)
        state = rules.apply(state, Move("waste", "stock", len(rules.pile(state, "waste"))))
    state = rules.apply(state, DEAL)
    assert state.redeals == 2
    text = dumps(state)
    assert text.startswith("1:corners:2:")
    assert loads(text) == state


def test_the_documented_example() -> None:
    text = dumps(get_ruleset("corners").deal(1))
    assert text.endswith(",,KC,8D,7H,5S,4D,7C,7S,8C,AC")


GOOD = dumps(get_ruleset("corners").deal(1))
STOCK, REST = GOOD.split(":", 3)[3].split(",", 1)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "1:corners:0",
        GOOD.replace("1:", "2:", 1),
        GOOD.replace("corners", "klondike", 1),
        GOOD.replace(":0:", ":x:", 1),
        GOOD.replace(":0:", ":-1:", 1),
        GOOD.replace(":0:", ":3:", 1),  # Corners allows two redeals
        GOOD + ",",  # a pile too many
        GOOD.rsplit(",", 1)[0],  # a pile too few
        GOOD.replace(",KC,", ",K,", 1),  # half a card
        GOOD.replace(",KC,", ",KX,", 1),  # no such suit
        GOOD.replace(",KC,", ",1C,", 1),  # no such rank
        GOOD.replace(",KC,", ",,", 1),  # a card missing
        GOOD.replace(",KC,", ",KCKC,", 1),  # a card too many
        f"1:corners:0:{STOCK[2:]},{REST}",
    ],
)
def test_corrupt_text_raises_corrupt_state(text: str) -> None:
    with pytest.raises(CorruptState):
        loads(text)


def test_games_without_redeals_refuse_a_redeal_count() -> None:
    good = dumps(get_ruleset("quadrangle").deal(1))
    with pytest.raises(CorruptState):
        loads(good.replace(":0:", ":1:", 1))
