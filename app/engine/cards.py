"""Cards and ranks.

Inside the engine a card is a small int, its *face*: ``suit * 13 + rank - 1`` (0…51), so that
piles are tuples of ints and states hash and compare cheaply. A face-down card is stored as
``~face`` (always negative). Identical cards of different decks share a face: the rules treat
them as interchangeable, and nothing a player sees can tell them apart.

``Card`` is the value type used at the edges (parsing, display, tests).
"""

from __future__ import annotations

from dataclasses import dataclass

SUITS = "CDHS"
RANKS = "A23456789TJQK"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
RANK_NAMES = (
    "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king",
)  # fmt: skip

ACE = 1
KING = 13


def succ(rank: int) -> int:
    """The next rank up, K wrapping to A."""
    return rank % 13 + 1


def pred(rank: int) -> int:
    """The next rank down, A wrapping to K."""
    return (rank + 11) % 13 + 1


def face(rank: int, suit: int) -> int:
    return suit * 13 + rank - 1


def rank_of(card: int) -> int:
    """Rank (1…13) of a face-up card."""
    return card % 13 + 1


def suit_of(card: int) -> int:
    """Suit index (0…3, in the order C D H S) of a face-up card."""
    return card // 13


def code_of(card: int) -> str:
    """Text code of a face, e.g. ``TD``; face-down markers must be removed first."""
    return RANKS[card % 13] + SUITS[card // 13]


# What a player is shown of each value a pile can hold: a face's code, nothing of a face-down
# card. Every answer shows every pile, so this is looked up rather than built card by card.
SHOWN: dict[int, str | None] = {c: code_of(c) for c in range(52)} | {~c: None for c in range(52)}


def label_of(card: int) -> str:
    """How a player reads the card in a message, e.g. ``10♦``."""
    return RANK_LABELS[card % 13] + SUIT_SYMBOLS[card // 13]


def name_of(card: int) -> str:
    """Spoken name for screen readers, e.g. ``10 of diamonds``."""
    return f"{RANK_NAMES[card % 13]} of {SUIT_NAMES[card // 13]}"


def parse_code(code: str) -> int:
    """Face of a text code such as ``7S``; raises ``ValueError`` for anything else."""
    if len(code) != 2 or code[0] not in RANKS or code[1] not in SUITS:
        raise ValueError(f"{code!r} is not a card code (rank A23456789TJQK then suit CDHS)")
    return SUITS.index(code[1]) * 13 + RANKS.index(code[0])


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """A card as a value: rank 1…13 (A…K) and suit 0…3 (C D H S)."""

    rank: int
    suit: int

    def __post_init__(self) -> None:
        if not (1 <= self.rank <= 13 and 0 <= self.suit <= 3):
            raise ValueError(f"no such card: rank {self.rank}, suit {self.suit}")

    @classmethod
    def parse(cls, code: str) -> Card:
        return cls.from_face(parse_code(code))

    @classmethod
    def from_face(cls, card: int) -> Card:
        return cls(rank_of(card), suit_of(card))

    @property
    def face(self) -> int:
        return face(self.rank, self.suit)

    @property
    def code(self) -> str:
        return code_of(self.face)

    @property
    def label(self) -> str:
        """How a player reads the card in a message, e.g. ``10♦``."""
        return label_of(self.face)

    @property
    def name(self) -> str:
        return name_of(self.face)

    def __str__(self) -> str:
        return self.code
