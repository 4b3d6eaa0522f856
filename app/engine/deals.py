"""Deal algorithm v1 (rules.md §1).

A keyed, portable pseudo-random stream, so that ``(game, number)`` gives the same cards on every
server with the same deal key, for ever, whatever Python's own ``random`` does. Never replace
this with a library shuffle: every shared deal link and every stored game depends on it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

from app.engine.errors import InvalidDeal
from app.engine.reasons import N_

DEVELOPMENT_KEY = b"patience-hall-development-key"
MAX_DEAL = 2**53 - 1
ALGORITHM = "v1"

T = TypeVar("T")


def check_deal_number(number: int) -> int:
    if isinstance(number, bool) or not isinstance(number, int):
        raise InvalidDeal(N_("A deal number must be a whole number."), "deal_not_a_number")
    if not 1 <= number <= MAX_DEAL:
        raise InvalidDeal(
            N_("Deal numbers run from 1 to %(max)s."), "deal_out_of_range", max=MAX_DEAL
        )
    return number


def deal_seed(key: bytes, slug: str, number: int) -> bytes:
    message = f"{ALGORITHM}|{slug}|{check_deal_number(number)}".encode()
    return hmac.new(key, message, hashlib.sha256).digest()


class DealStream:
    """The byte stream of §1.2 and the unbiased ``below`` of §1.3."""

    __slots__ = ("_block", "_buffer", "_pos", "_seed")

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._block = 0
        self._buffer = b""
        self._pos = 0

    def _draw(self) -> int:
        if self._pos + 8 > len(self._buffer):
            # Blocks are 32 bytes, a multiple of 8, so a draw never straddles two blocks.
            self._buffer = hashlib.sha256(self._seed + self._block.to_bytes(8, "big")).digest()
            self._block += 1
            self._pos = 0
        value = int.from_bytes(self._buffer[self._pos : self._pos + 8], "big")
        self._pos += 8
        return value

    def below(self, m: int) -> int:
        if m < 1:
            raise ValueError("below() needs m >= 1")
        limit = 2**64 - (2**64 % m)
        while True:
            u = self._draw()
            if u < limit:
                return u % m


def shuffle(items: Sequence[T], stream: DealStream) -> list[T]:
    """Fisher–Yates as in §1.4; returns a new list."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def canonical_deck(decks: int) -> list[int]:
    """Faces in §1.5 order: per deck copy, suits C D H S, each A → K."""
    return list(range(52)) * decks


def shuffled(key: bytes, slug: str, number: int, cards: Sequence[int]) -> list[int]:
    return shuffle(cards, DealStream(deal_seed(key, slug, number)))
