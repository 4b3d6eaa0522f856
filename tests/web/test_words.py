"""The engine's words in the player's language (app/web/words.py): cards, piles and counts as
each language writes them, sentences from the catalogs, and the services' refusals."""

from __future__ import annotations

import pytest

from app.engine import CardRef, CardsRef, PileRef, RangeRef, RankRef, ShareRef, SuitRef, Words
from app.engine.cards import face
from app.engine.reasons import Param
from app.services.errors import NotFound, ServiceError
from app.services.hint_views import HintView
from app.web.i18n import speaking
from app.web.words import (
    card_label,
    card_name,
    code_label,
    hint_message,
    pile_name,
    say_all,
    say_words,
    service_message,
)

QUEEN_OF_SPADES = face(12, 3)
TEN_OF_DIAMONDS = face(10, 1)
JACK_OF_HEARTS = face(11, 2)


@pytest.mark.parametrize(
    ("lang", "queen", "jack", "ace"),
    [("en", "Q♠", "J♥", "A♣"), ("de", "D♠", "B♥", "A♣"), ("fr", "D♠", "V♥", "A♣")],
)
def test_card_labels_use_the_languages_indices(lang: str, queen: str, jack: str, ace: str) -> None:
    with speaking(lang):
        assert card_label(QUEEN_OF_SPADES) == queen
        assert card_label(JACK_OF_HEARTS) == jack
        assert card_label(face(1, 0)) == ace
        assert card_label(TEN_OF_DIAMONDS) == "10♦"
        assert code_label("QS") == queen


def test_card_names_are_spoken_in_the_languages_order() -> None:
    assert card_name(QUEEN_OF_SPADES) == "queen of spades"
    with speaking("de"):
        name = card_name(QUEEN_OF_SPADES)
    assert name != "queen of spades" and name.endswith("Dame")


def test_pile_names() -> None:
    assert pile_name(PileRef("tableau", "t3")) == "pile t3"
    assert pile_name(PileRef("stock", "stock")) == "the stock"
    with speaking("de"):
        assert pile_name(PileRef("tableau", "t3")) == "Stapel t3"


def test_a_sentence_is_capitalised_and_its_parameters_worded() -> None:
    moved = Words(
        "moved",
        "Moved %(cards)s from %(from)s to %(to)s.",
        {
            "cards": CardsRef((QUEEN_OF_SPADES, JACK_OF_HEARTS)),
            "from": PileRef("tableau", "t1"),
            "to": PileRef("tableau", "t2"),
        },
    )
    assert say_words(moved) == "Moved 2 cards, Q♠ to J♥, from pile t1 to pile t2."
    with speaking("de"):
        said = say_words(moved)
    assert said == "2 Karten, D♠ bis B♥, von Stapel t1 nach Stapel t2 gelegt."


def test_parameters_of_every_kind() -> None:
    template = "%(a)s|%(b)s|%(c)s|%(d)s|%(e)s|%(f)s"
    params: dict[str, Param] = {
        "a": CardRef(TEN_OF_DIAMONDS),
        "b": CardsRef((TEN_OF_DIAMONDS,)),
        "c": RangeRef(face(1, 0), face(13, 0)),
        "d": RankRef(8),
        "e": SuitRef(2),
        "f": ShareRef(0.25),
    }
    assert say_words(Words("x", template, params)) == "10♦|10♦|A♣–K♣|an 8|♥|25%"
    with speaking("fr"):
        french = say_words(Words("x", template, params))
    assert french.split("|")[2] == "A♣–R♣"
    assert french.split("|")[5].replace("\u202f", " ").replace("\xa0", " ") == "25 %"


def test_say_all_joins_sentences_and_hints_use_words_or_their_message() -> None:
    turned = Words("turned_up", "%(card)s turned face up.", {"card": CardRef(QUEEN_OF_SPADES)})
    assert say_all([turned, turned]) == "Q♠ turned face up. Q♠ turned face up."
    worded = HintView(move=None, outcome="estimate", exact=False, message="unused", words=[turned])
    assert hint_message(worded) == "Q♠ turned face up."
    plain = HintView(move=None, outcome="unknown", exact=False, message="Put back.")
    with speaking("de"):
        assert hint_message(plain) not in ("", "Put back.")


def test_service_refusals_are_said_with_their_parameters() -> None:
    assert service_message(NotFound("No game %(id)s.", id="g7")) == "No game g7."
    refused = ServiceError("%(card)s turned face up.", card=CardRef(QUEEN_OF_SPADES))
    with speaking("de"):
        assert service_message(refused) == "D♠ wurde aufgedeckt."
    engine = ServiceError.of(Words("turned_up", "%(card)s turned face up.", {"card": CardRef(0)}))
    assert service_message(engine) == "A♣ turned face up."
