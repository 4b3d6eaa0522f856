"""Use-case errors, each with the machine code of contract.md; the web layer maps them to HTTP.

A message is an English template (a gettext message id, ``%(name)s`` for its parameters) and
parameters: ``message`` is the English sentence; the web says ``template`` in the player's
language (app/web/words.py). ``words``: the engine's own reason, when the engine refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from app.engine import Words


def N_(message: str) -> str:
    """Marks a message for the catalogs (app/locale); returns it unchanged."""
    return message


# Parameters that are catalog messages themselves ("A replay", a rate limit's reason): the web
# says them in the player's language too.
MESSAGE_PARAMS = frozenset({"reason", "what"})


class ServiceError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, /, **params: object) -> None:
        text = message % params if params else message
        super().__init__(text)
        self.message = text
        self.template = message
        self.params = params
        self.words: Words | None = None  # the engine's reason, when the engine refused
        self.details: dict[str, str] = {}  # more machine-readable facts for the JSON answer

    @classmethod
    def of(cls, words: Words) -> Self:
        """The engine's refusal, its reason kept as words (said in the player's language)."""
        exc = cls(str(words))
        exc.words = words
        return exc


class NotFound(ServiceError):
    status, code = 404, "not_found"


class Forbidden(ServiceError):
    status, code = 403, "forbidden"


class SameDealInPlay(ServiceError):
    """The viewer has an unfinished game of this deal: other games of it would show its cards."""

    status, code = 403, "same_deal_in_play"

    def __init__(self, message: str = N_("Finish your own game of this deal first.")) -> None:
        super().__init__(message)


class DealNotFinished(ServiceError):
    """Move logs and replays of a deal are for players who have finished a game of it."""

    status, code = 403, "deal_not_finished"

    def __init__(
        self,
        message: str = N_(
            "Replays of a deal are shown to players who have finished a game of it: "
            "play this deal first."
        ),
    ) -> None:
        super().__init__(message)


class DealSealed(ServiceError):
    """A competition on the deal is open (contract v3, "Sealed deals"): what would show its
    hidden cards waits until the seal lifts. ``opens_at``: when, if a time is known."""

    status, code = 403, "deal_sealed"

    def __init__(self, message: str, opens_at: str | None = None, **params: object) -> None:
        super().__init__(message, **params)
        if opens_at is not None:
            self.details = {"opens_at": opens_at}


class RaceInPlay(ServiceError):
    """A game of a running race is its owner's alone; others watch it as spectators."""

    status, code = 403, "race_in_play"

    def __init__(
        self,
        message: str = N_(
            "This game is part of a race that is still on: only its player sees "
            "it; others can watch the race from its room."
        ),
    ) -> None:
        super().__init__(message)


class DealInPlay(ServiceError):
    """The player already has an unfinished game of the deal they asked to start."""

    status, code = 409, "deal_in_play"

    def __init__(self, game_id: str) -> None:
        super().__init__(N_("You already have a game of this deal in play: finish it first."))
        self.game_id = game_id
        self.details = {"game": game_id}


class Unauthenticated(ServiceError):
    status, code = 401, "unauthenticated"


class InvalidRequest(ServiceError):
    status, code = 422, "invalid_request"


class IllegalMoveError(ServiceError):
    status, code = 422, "illegal_move"


class StaleVersion(ServiceError):
    status, code = 409, "stale_version"


class GameOver(ServiceError):
    status, code = 409, "game_over"


class GameInPlay(ServiceError):
    status, code = 409, "game_in_play"


class UndoUnavailable(ServiceError):
    status, code = 409, "undo_unavailable"


class NothingToFinish(ServiceError):
    """Auto-finish asked for while some card left cannot go up without a choice."""

    status, code = 409, "nothing_to_finish"


class NameTaken(ServiceError):
    status, code = 409, "name_taken"


class BadCredentials(ServiceError):
    status, code = 401, "bad_credentials"


class IdempotencyKeyReused(ServiceError):
    status, code = 422, "idempotency_key_reused"


class Unavailable(ServiceError):
    """The database cannot be reached or is too busy right now: try again shortly."""

    status, code = 503, "unavailable"


class NoCertifiedDeals(ServiceError):
    status, code = 409, "no_certified_deals"


class NoCertifiedDealsLeft(NoCertifiedDeals):
    """The pool holds deals, but the caller has a game of every one (contract v3)."""


class NoSlip(ServiceError):
    """ "Try again from here" for a game whose analysis names no slip (yet)."""

    status, code = 409, "no_slip"


class RaceNotStarted(ServiceError):
    status, code = 409, "race_not_started"


class HintsOffInRaces(ServiceError):
    """A racer asked for a hint: racers play the deal on their own (Castle's End's hints are
    exact, so one would hand a racer the solver's line)."""

    status, code = 409, "hints_off_in_races"


class RoomClosed(ServiceError):
    status, code = 409, "room_closed"


class RoomFull(ServiceError):
    status, code = 409, "room_full"


class TooManyRooms(ServiceError):
    status, code = 409, "too_many_rooms"


class RaceRunning(ServiceError):
    status, code = 409, "race_running"


class NotAMember(ServiceError):
    status, code = 403, "not_a_member"


class Banned(ServiceError):
    """An operator banned this player: their games do not count and they cannot play rated."""

    status, code = 403, "banned"


class NotInChallenge(ServiceError):
    """A competition game on a deal of one's own is clean: no hints, no undo (contract v3)."""

    status, code = 409, "not_in_challenge"

    def __init__(self, what: str) -> None:
        super().__init__(
            N_("No %(what)s in a challenge or event game: competition games are played clean."),
            what=_CLEAN_OF.get(what, what),
        )


# What a competition game is played without (a parameter that is a message itself).
_CLEAN_OF = {"hints": N_("hints"), "undo": N_("undo"), "restart": N_("restart")}


class AlreadyPlayed(ServiceError):
    """The player has started today's challenge of this game already (one a day)."""

    status, code = 409, "already_played"

    def __init__(self, game_id: str) -> None:
        super().__init__(N_("You have played today's challenge of this game already."))
        self.details = {"game": game_id}
