"""The use-case errors (app/services/errors.py): their messages, parameters and engine words,
the machine-readable details some carry, and one code and status per kind of refusal."""

from __future__ import annotations

import pytest

from app.engine import Words
from app.services import errors
from app.services.errors import (
    MESSAGE_PARAMS,
    N_,
    AlreadyPlayed,
    DealInPlay,
    DealSealed,
    IllegalMoveError,
    NoCertifiedDeals,
    NoCertifiedDealsLeft,
    NotInChallenge,
    SameDealInPlay,
    ServiceError,
    StaleVersion,
)


def every_error() -> list[type[ServiceError]]:
    found = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, ServiceError)
    ]
    return sorted(found, key=lambda cls: cls.__name__)


def test_a_message_is_its_template_filled_with_its_parameters() -> None:
    exc = StaleVersion("Version %(version)s, now %(now)s.", version=3, now=5)
    assert str(exc) == exc.message == "Version 3, now 5."
    assert exc.template == "Version %(version)s, now %(now)s."
    assert exc.params == {"version": 3, "now": 5}
    assert exc.words is None and exc.details == {}


def test_a_message_without_parameters_is_kept_as_written() -> None:
    # No parameters: no %-formatting, so a literal "%" cannot break the message.
    exc = ServiceError("Only 100% sure of %(nothing)s")
    assert exc.message == exc.template == "Only 100% sure of %(nothing)s"


def test_of_keeps_the_engines_words_for_the_players_language() -> None:
    words = Words("not_on_foundation", "%(card)s cannot go there", {"card": "the 7♠"})
    exc = IllegalMoveError.of(words)
    assert isinstance(exc, IllegalMoveError)
    assert exc.words is words
    assert exc.message == str(words) == "The 7♠ cannot go there"
    assert (exc.status, exc.code) == (422, "illegal_move")


def test_every_kind_of_refusal_has_a_code_of_its_own_and_a_client_or_service_status() -> None:
    classes = every_error()
    assert len(classes) > 30
    codes: dict[str, type[ServiceError]] = {}
    for cls in classes:
        assert cls.status in {400, 401, 403, 404, 409, 422, 503}, cls
        assert cls.code.isidentifier() and cls.code == cls.code.lower(), cls
        owner = codes.setdefault(cls.code, cls)
        # Only a refinement of an error may share its code (clients tell them by the code).
        assert owner is cls or issubclass(cls, owner) or issubclass(owner, cls), (owner, cls)
    assert NoCertifiedDealsLeft.code == NoCertifiedDeals.code == "no_certified_deals"


def test_refusals_that_name_a_game_carry_it_in_their_details() -> None:
    in_play = DealInPlay("g123")
    assert in_play.game_id == "g123" and in_play.details == {"game": "g123"}
    assert (in_play.status, in_play.code) == (409, "deal_in_play")
    played = AlreadyPlayed("g456")
    assert played.details == {"game": "g456"} and played.code == "already_played"


def test_a_sealed_deal_says_when_it_opens_if_that_is_known() -> None:
    known = DealSealed("Sealed until %(until)s.", "2026-11-22T00:00:00+00:00", until="midnight")
    assert known.message == "Sealed until midnight."
    assert known.details == {"opens_at": "2026-11-22T00:00:00+00:00"}
    unknown = DealSealed("Sealed while the race runs.")
    assert unknown.details == {} and (unknown.status, unknown.code) == (403, "deal_sealed")


def test_errors_with_a_default_message_need_no_arguments() -> None:
    exc = SameDealInPlay()
    assert exc.message == "Finish your own game of this deal first."
    assert exc.params == {}


@pytest.mark.parametrize(
    ("what", "said"), [("hints", "hints"), ("undo", "undo"), ("restart", "restart")]
)
def test_not_in_challenge_names_what_competition_games_are_played_without(
    what: str, said: str
) -> None:
    exc = NotInChallenge(what)
    assert exc.message == (
        f"No {said} in a challenge or event game: competition games are played clean."
    )
    # The thing refused is a catalog message itself: the web says it in the player's language.
    assert "what" in MESSAGE_PARAMS and exc.params == {"what": said}
    assert (exc.status, exc.code) == (409, "not_in_challenge")


def test_an_unknown_thing_refused_in_a_challenge_is_named_as_given() -> None:
    assert NotInChallenge("pause").params == {"what": "pause"}


def test_n_marks_a_message_and_returns_it_unchanged() -> None:
    message = "Any %(text)s at all."
    assert N_(message) is message
