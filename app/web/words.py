"""The engine's words in the player's language.

The engine says what it refused and what a move did as :class:`~app.engine.Words`: a code, an
English template (the catalog's message id) and parameters. Here each parameter is named as
players of the language write it (cards ``B♥`` in German, ``V♥`` in French, piles "Stapel t3",
counts with the locale's digits) and the template is looked up in the catalogs.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.engine import (
    Card,
    CardRef,
    CardsRef,
    EngineError,
    GameRef,
    PileRef,
    RangeRef,
    RankRef,
    ShareRef,
    SuitRef,
    Words,
)
from app.services.errors import MESSAGE_PARAMS, ServiceError
from app.services.hint_views import HintView
from app.web.i18n import N_, current_lang, gettext, ngettext, number, percent, pgettext

# Names of ranks and suits as the language writes them, looked up in the catalogs with a
# context: "card index" (the corner of a card: English J Q K, German B D K, French V D R,
# Spanish S C R) and "card name" (spoken: "queen", "Dame", "dame", "caballo").
SUIT_SYMBOLS = "♣♦♥♠"
_PILE_NAMES = {
    "stock": N_("the stock"),
    "waste": N_("the waste"),
    "foundation": N_("foundation %(id)s"),
    "tableau": N_("pile %(id)s"),
    "reserve": N_("reserve %(id)s"),
}


def rank_index(rank: int) -> str:
    """The corner index of a rank (1…13) in the player's language."""
    if rank == 1:
        return pgettext("card index", "A")
    if rank == 11:
        return pgettext("card index", "J")
    if rank == 12:
        return pgettext("card index", "Q")
    if rank == 13:
        return pgettext("card index", "K")
    return str(rank)


def rank_name(rank: int) -> str:
    """A rank's spoken name: "ace", "7", "Bube", "valet"."""
    names = {
        1: pgettext("card name", "ace"),
        11: pgettext("card name", "jack"),
        12: pgettext("card name", "queen"),
        13: pgettext("card name", "king"),
    }
    return names.get(rank, str(rank))


def suit_name(suit: int) -> str:
    return (
        pgettext("card name", "clubs"),
        pgettext("card name", "diamonds"),
        pgettext("card name", "hearts"),
        pgettext("card name", "spades"),
    )[suit]


def card_label(face: int) -> str:
    """A card as a player of the language writes it: ``10♦``, ``D♠`` in German."""
    return rank_index(face % 13 + 1) + SUIT_SYMBOLS[face // 13]


def code_label(code: str) -> str:
    """A card code (``QS``) as the player writes it."""
    return card_label(Card.parse(code).face)


def card_name(face: int) -> str:
    """A card's spoken name, for screen readers: "queen of spades", "Pik Dame"."""
    rank, suit = rank_name(face % 13 + 1), suit_name(face // 13)
    return gettext("%(rank)s of %(suit)s") % {"rank": rank, "suit": suit}


def pile_name(ref: PileRef) -> str:
    return gettext(_PILE_NAMES[ref.kind]) % {"id": ref.id}


def _param(value: object) -> str:
    if isinstance(value, CardRef):
        return card_label(value.face)
    if isinstance(value, CardsRef):
        if len(value.faces) == 1:
            return card_label(value.faces[0])
        first, last = card_label(value.faces[0]), card_label(value.faces[-1])
        n = len(value.faces)
        return ngettext(
            "%(n)s card, %(first)s to %(last)s,", "%(n)s cards, %(first)s to %(last)s,", n
        ) % {"n": number(n), "first": first, "last": last}
    if isinstance(value, RangeRef):
        return f"{card_label(value.first)}–{card_label(value.last)}"
    if isinstance(value, RankRef):
        if current_lang() == "en":
            return str(value)  # "an A", "a 7"
        return rank_name(value.rank)
    if isinstance(value, SuitRef):
        return SUIT_SYMBOLS[value.suit]
    if isinstance(value, PileRef):
        return pile_name(value)
    if isinstance(value, ShareRef):
        return percent(value.fraction)
    if isinstance(value, GameRef):
        return value.name  # game names are proper names, the same in every language
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return number(value)
    return str(value)


def say_words(words: Words) -> str:
    """The engine's words in the player's language, as a sentence."""
    if words.plural:
        template = ngettext(words.template, words.plural, words.n)
    else:
        template = gettext(words.template)
    text = template % {k: _param(v) for k, v in words.params.items()}
    return text[:1].upper() + text[1:]


def say_all(said: Sequence[Words]) -> str:
    return " ".join(say_words(w) for w in said)


def hint_message(hint: HintView) -> str:
    """A hint's message in the player's language: its words (the solver's estimates, built
    from numbers), else its fixed message, a catalog message itself."""
    return say_all(hint.words) if hint.words else gettext(hint.message)


def refusal(exc: EngineError) -> str:
    """Why the engine refused, in the player's language."""
    return say_words(exc.words)


def service_message(exc: ServiceError) -> str:
    """A refusal of the services in the player's language (the engine's reason, when the
    engine refused); its ``code`` never changes."""
    if exc.words is not None:
        return say_words(exc.words)
    text = gettext(exc.template)
    if not exc.params:
        return text
    return text % {
        k: gettext(v) if k in MESSAGE_PARAMS and isinstance(v, str) else _param(v)
        for k, v in exc.params.items()
    }
