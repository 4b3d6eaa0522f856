"""The engine's domain errors (app/engine/errors.py): each a ``ValueError`` carrying its reason
as words (a code, an English template, parameters), with ``str()`` the English sentence."""

from __future__ import annotations

import pytest

from app.engine import (
    CardRef,
    CorruptState,
    EngineError,
    IllegalMove,
    InvalidDeal,
    InvalidMove,
    PileRef,
    UnknownGame,
    get_ruleset,
)
from app.engine.cards import parse_code
from app.engine.reasons import Nn_

FORMS = Nn_("%(pile)s holds only %(n)s card.", "%(pile)s holds only %(n)s cards.")


@pytest.mark.parametrize("kind", [IllegalMove, InvalidMove, UnknownGame, InvalidDeal, CorruptState])
def test_every_refusal_is_an_engine_error_and_a_value_error(kind: type[EngineError]) -> None:
    # The web maps EngineError to a 4xx; callers that only know ValueError still catch it.
    with pytest.raises(EngineError) as raised:
        raise kind("Nothing fits.")
    assert isinstance(raised.value, ValueError)
    assert raised.value.code == kind.__name__  # no code given: the class names the reason


def test_parameters_are_kept_as_data_and_worded_in_english() -> None:
    seven, eight = parse_code("7S"), parse_code("8H")
    exc = IllegalMove(
        "%(card)s cannot go on %(top)s.", "foundation_suit", card=CardRef(seven), top=CardRef(eight)
    )
    assert exc.code == "foundation_suit"
    assert exc.words.template == "%(card)s cannot go on %(top)s."
    assert exc.words.params == {"card": CardRef(seven), "top": CardRef(eight)}
    assert str(exc) == "7♠ cannot go on 8♥."


def test_a_sentence_opening_with_a_pile_gets_its_capital() -> None:
    exc = IllegalMove("%(pile)s is empty.", "pile_empty", pile=PileRef("waste", "waste"))
    assert str(exc) == "The waste is empty."


def test_a_template_without_parameters_is_said_as_it_is() -> None:
    # Not %-formatted: a literal percent sign (a state's own text in CorruptState) survives.
    exc = CorruptState("pile 'x%y' is not a run of card codes")
    assert str(exc) == "pile 'x%y' is not a run of card codes"
    assert exc.words.params == {}


@pytest.mark.parametrize(
    ("n", "text"), [(1, "Pile t3 holds only 1 card."), (4, "Pile t3 holds only 4 cards.")]
)
def test_a_counted_refusal_chooses_its_form_by_the_count(n: int, text: str) -> None:
    exc = IllegalMove.counted("pile_holds_fewer", FORMS, n, pile=PileRef("tableau", "t3"))
    assert type(exc) is IllegalMove
    assert str(exc) == text
    assert exc.code == "pile_holds_fewer"
    assert exc.words.n == n and exc.words.params["n"] == n
    assert (exc.words.template, exc.words.plural) == FORMS  # both forms for the web's ngettext


def test_an_unknown_game_names_the_slug_asked_for() -> None:
    with pytest.raises(UnknownGame) as raised:
        get_ruleset("klondike")
    assert raised.value.code == "unknown_game"
    assert str(raised.value) == "There is no game called 'klondike'."
    with pytest.raises(UnknownGame):
        get_ruleset(["not", "hashable"])  # type: ignore[arg-type]
