"""Deal algorithm v1 (rules.md §1), piece by piece, against stubs and a plain re-implementation."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest

from app.engine import DEVELOPMENT_KEY, GAMES, MAX_DEAL, InvalidDeal, get_ruleset
from app.engine.deals import (
    DealStream,
    canonical_deck,
    check_deal_number,
    deal_seed,
    shuffle,
    shuffled,
)

TWO_64 = 2**64


class StubStream(DealStream):
    """A stream whose 64-bit draws are given in advance."""

    def __init__(self, draws: list[int]) -> None:
        super().__init__(b"")
        self.draws = list(draws)
        self.used = 0

    def _draw(self) -> int:
        self.used += 1
        return self.draws.pop(0)


class BelowStub(DealStream):
    """A stream whose ``below`` answers are given in advance; records what it was asked."""

    def __init__(self, answers: list[int]) -> None:
        super().__init__(b"")
        self.answers = list(answers)
        self.asked: list[int] = []

    def below(self, m: int) -> int:
        self.asked.append(m)
        return self.answers.pop(0)


def test_seed_is_hmac_sha256_of_version_slug_and_number() -> None:
    expected = hmac.new(DEVELOPMENT_KEY, b"v1|corners|17", hashlib.sha256).digest()
    assert deal_seed(DEVELOPMENT_KEY, "corners", 17) == expected
    assert DEVELOPMENT_KEY == b"patience-hall-development-key"


def test_stream_draws_8_byte_big_endian_words_from_counter_blocks() -> None:
    seed = deal_seed(DEVELOPMENT_KEY, "quadrangle", 1)
    data = b"".join(hashlib.sha256(seed + i.to_bytes(8, "big")).digest() for i in range(3))
    expected = [int.from_bytes(data[k : k + 8], "big") for k in range(0, len(data), 8)]
    stream = DealStream(seed)
    assert [stream._draw() for _ in range(12)] == expected


def test_below_rejects_draws_at_or_above_the_limit() -> None:
    # m = 3: 2^64 mod 3 = 1, so the limit is 2^64 - 1 and only the largest draw is rejected.
    stream = StubStream([TWO_64 - 1, TWO_64 - 2])
    assert stream.below(3) == (TWO_64 - 2) % 3
    assert stream.used == 2
    # m = 2^63 + 1: the limit is 2^63 + 1, so every draw from there up is rejected.
    m = 2**63 + 1
    stream = StubStream([2**63 + 1, TWO_64 - 1, 2**63, 5])
    assert stream.below(m) == 2**63
    assert stream.used == 3


def test_below_returns_the_draw_mod_m_when_accepted() -> None:
    assert StubStream([1000]).below(7) == 1000 % 7
    assert StubStream([TWO_64 - 1]).below(1) == 0  # m = 1: nothing is rejected
    assert StubStream([TWO_64 - 1]).below(2) == 1  # powers of two: nothing is rejected
    with pytest.raises(ValueError):
        StubStream([0]).below(0)


def test_shuffle_is_fisher_yates_from_the_top_down() -> None:
    stream = BelowStub([0, 0, 0])
    items = ["a", "b", "c", "d"]
    assert shuffle(items, stream) == ["b", "c", "d", "a"]
    assert stream.asked == [4, 3, 2]  # below(i + 1) for i = 3, 2, 1
    assert items == ["a", "b", "c", "d"]  # a new list; the input is untouched
    assert shuffle(items, BelowStub([3, 2, 1])) == items  # j = i swaps nothing
    assert shuffle(items, BelowStub([1, 1, 0])) == ["c", "a", "d", "b"]


def test_shuffle_of_a_real_stream_is_a_permutation() -> None:
    deck = canonical_deck(2)
    out = shuffled(DEVELOPMENT_KEY, "quadrangle", 5, deck)
    assert Counter(out) == Counter(deck) and out != deck


def test_canonical_deck_is_suits_c_d_h_s_each_ace_to_king_per_copy() -> None:
    deck = canonical_deck(2)
    assert deck[:3] == [0, 1, 2] and deck[12] == 12 and deck[13] == 13
    assert deck == list(range(52)) * 2
    assert get_ruleset("quadruple-interchange").deck() == list(range(52)) * 4


def test_deal_numbers_run_from_1_to_2_pow_53_minus_1() -> None:
    assert MAX_DEAL == 2**53 - 1
    rules = get_ruleset("corners")
    assert rules.deal(1) != rules.deal(MAX_DEAL)
    for bad in (0, -1, MAX_DEAL + 1, 2**64):
        with pytest.raises(InvalidDeal, match="run from 1 to"):
            rules.deal(bad)
    for wrong_type in (True, 1.0, "1", None):
        with pytest.raises(InvalidDeal, match="whole number"):
            check_deal_number(wrong_type)  # type: ignore[arg-type]


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_the_same_pair_always_gives_the_same_layout(slug: str) -> None:
    rules = get_ruleset(slug)
    assert rules.deal(123) == rules.deal(123)
    assert rules.deal(123) != rules.deal(124)


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_a_different_key_gives_a_different_deal(slug: str) -> None:
    rules = get_ruleset(slug)
    assert rules.deal(1, b"a production secret") != rules.deal(1)
    assert rules.deal(1, DEVELOPMENT_KEY) == rules.deal(1)


def test_the_game_slug_is_part_of_the_seed() -> None:
    one_deck = canonical_deck(1)
    assert shuffled(DEVELOPMENT_KEY, "corners", 1, one_deck) != shuffled(
        DEVELOPMENT_KEY, "castles-end", 1, one_deck
    )


def test_patriarchs_shuffles_96_cards() -> None:
    rules = get_ruleset("patriarchs")
    deck = rules.deck()
    assert len(deck) == 96
    # The first deck less its Aces and Kings (in canonical order), then the whole second deck.
    assert deck[:44] == [c for c in range(52) if c % 13 not in (0, 12)]
    assert deck[44:] == list(range(52))
    cards = shuffled(DEVELOPMENT_KEY, "patriarchs", 1, deck)
    state = rules.deal(1)
    dealt = [rules.pile(state, f"r{i}")[0] for i in range(1, 10)]
    assert dealt + list(reversed(rules.pile(state, "stock"))) == cards
    # A 104-card shuffle would give other cards.
    assert shuffled(DEVELOPMENT_KEY, "patriarchs", 1, canonical_deck(2))[:9] != cards[:9]


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_every_deal_holds_each_card_once_per_deck(slug: str) -> None:
    rules = get_ruleset(slug)
    for number in (1, 99, MAX_DEAL):
        state = rules.deal(number)
        cards = Counter(c if c >= 0 else ~c for pile in state.piles for c in pile)
        assert cards == dict.fromkeys(range(52), rules.decks)
        assert state.redeals == 0
