"""Use-case errors, each with the machine code of contract.md; the web layer maps them to HTTP."""

from __future__ import annotations


class ServiceError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ServiceError):
    status, code = 404, "not_found"


class Forbidden(ServiceError):
    status, code = 403, "forbidden"


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


class NameTaken(ServiceError):
    status, code = 409, "name_taken"


class BadCredentials(ServiceError):
    status, code = 401, "bad_credentials"


class NoCertifiedDeals(ServiceError):
    status, code = 409, "no_certified_deals"
