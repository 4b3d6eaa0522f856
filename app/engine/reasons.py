"""Structured reasons and words: a code, an English template and typed parameters.

The engine never words anything in a player's language itself: what it refuses, and what a
move did, it says as a :class:`Words` (a code, the English template, which is also the gettext
message id, and parameters). ``str()`` gives the English sentence (logs, the engine's own
exceptions, back-compatibility); the web renders the same template in the player's language
(app/web/words.py) with cards, ranks, suits and piles named as players of that language write
them.

Templates use ``%(name)s`` placeholders (gettext's python-format). ``N_`` only marks a template
for extraction into the catalogs (``pybabel extract``); it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.engine.cards import RANK_LABELS, SUIT_SYMBOLS, label_of


def N_(template: str) -> str:
    """Marks ``template`` as a message of the catalogs; returns it unchanged."""
    return template


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a singular and a plural template as one message of the catalogs (ngettext)."""
    return singular, plural


@dataclass(frozen=True, slots=True)
class CardRef:
    """A face-up card (its face, 0…51), written ``7♠`` in English."""

    face: int

    def __str__(self) -> str:
        return label_of(self.face)


@dataclass(frozen=True, slots=True)
class CardsRef:
    """Several cards moved together, first (bottom) to last (top)."""

    faces: tuple[int, ...]

    def __str__(self) -> str:
        if len(self.faces) == 1:
            return label_of(self.faces[0])
        first, last = label_of(self.faces[0]), label_of(self.faces[-1])
        return f"{len(self.faces)} cards, {first} to {last},"


@dataclass(frozen=True, slots=True)
class RangeRef:
    """A run of cards by its first and last card: ``7♠–5♠``."""

    first: int
    last: int

    def __str__(self) -> str:
        return f"{label_of(self.first)}–{label_of(self.last)}"


@dataclass(frozen=True, slots=True)
class RankRef:
    """A rank (1…13) as the subject of a sentence: "an A", "a 7" in English."""

    rank: int

    def __str__(self) -> str:
        return f"{'an' if self.rank in (1, 8) else 'a'} {RANK_LABELS[self.rank - 1]}"


@dataclass(frozen=True, slots=True)
class SuitRef:
    """A suit (0…3, C D H S), written as its symbol."""

    suit: int

    def __str__(self) -> str:
        return SUIT_SYMBOLS[self.suit]


@dataclass(frozen=True, slots=True)
class PileRef:
    """A pile by kind and id: "pile t3", "foundation f1", "the stock" in English."""

    kind: str  # a PileKind value: stock, waste, foundation, tableau, reserve
    id: str

    def __str__(self) -> str:
        if self.kind in ("stock", "waste"):
            return f"the {self.id}"
        noun = {"foundation": "foundation", "tableau": "pile", "reserve": "reserve"}[self.kind]
        return f"{noun} {self.id}"


@dataclass(frozen=True, slots=True)
class GameRef:
    """A game by its slug, named by its (proper, untranslated) name."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ShareRef:
    """A share (0.0…1.0) said as a whole percentage: "40%" in English."""

    fraction: float

    def __str__(self) -> str:
        return f"{self.fraction:.0%}"


Param = int | str | CardRef | CardsRef | RangeRef | RankRef | SuitRef | PileRef | GameRef | ShareRef


@dataclass(frozen=True, slots=True)
class Words:
    """A sentence as data: ``code`` (stable, machine-readable), ``template`` (English, the
    catalog's message id; ``plural`` and ``n`` for a count-dependent one) and ``params``."""

    code: str
    template: str
    params: dict[str, Param] = field(default_factory=dict)
    plural: str = ""
    n: int = 0

    def english(self) -> str:
        template = self.plural if self.plural and self.n != 1 else self.template
        return sentence(template % {k: str(v) for k, v in self.params.items()})

    def __str__(self) -> str:
        return self.english()


def sentence(text: str) -> str:
    """The first letter up: a pile's name ("pile t3") may open a sentence."""
    return text[:1].upper() + text[1:]
