"""The pieces every answer shares: the base model, the refusals' shape, request types, and
answers sent as ready bytes."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from fastapi.responses import Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from app.engine import GAMES

GameSlug = Literal["quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs"]
"""The five games (contract.md): a request naming any other is refused with 422."""
assert set(get_args(GameSlug)) == set(GAMES), "GameSlug must list exactly the registered games"

# Query parameters that choose a board also take "all" (every game together) and "" (the
# same: an HTML form's empty choice).
BoardGame = Literal[
    "quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs", "all", ""
]
BoardPeriod = Literal["all", "30d", "7d", ""]

RANKS = "A23456789TJQK"


def _whole(value: Any) -> Any:
    """JSON Schema's "integer" is any number with no fraction: 651.0 is one, 651.5, "651" and
    true are not. Pydantic's strict int refuses the first; its lax int takes the last two."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError("Input should be a whole number")


WholeNumber = Annotated[int, BeforeValidator(_whole)]
"""An integer in a request body, as the schema says it (see :func:`_whole`)."""


def whole_between(low: int, high: int) -> Any:
    """A :data:`WholeNumber` from ``low`` to ``high``. Its schema is spelled out: inside an
    optional field pydantic would write the bounds of a validated type as ``ge``/``le``, which
    JSON Schema does not know (so a client's generator would send 0 for a deal)."""
    return Annotated[
        int,
        BeforeValidator(_whole),
        Field(ge=low, le=high),
        WithJsonSchema({"type": "integer", "minimum": low, "maximum": high}),
    ]


PILE_ID = r"^(stock|waste|[ftr][1-9][0-9]?)$"
"""A pile id as rules.md §0 writes them; one the game does not have is still a 422."""


class Answer(BaseModel):
    """Base of the answers: field names are the JSON names (``from`` needs an alias)."""

    # additionalProperties: false in the schema: an answer has exactly the fields it documents.
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


# -- errors ---------------------------------------------------------------------------------


class ErrorDetail(Answer):
    model_config = ConfigDict(extra="allow")  # a few refusals add facts (deal_in_play: game)

    code: str = Field(description="Machine-readable: illegal_move, stale_version, …")
    message: str = Field(description="Why, in a player's words.")
    game: str | None = Field(
        default=None, description="deal_in_play only: the id of the game of that deal in play."
    )
    opens_at: str | None = Field(
        default=None,
        description="deal_sealed only, when a time is known: when the seal lifts (ISO 8601).",
    )


class ErrorAnswer(Answer):
    """Every refusal under /api: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail


_WHY = {
    401: "No bearer token, or one that is not valid (`unauthenticated`).",
    403: "Not the caller's to do or see (`forbidden`, `same_deal_in_play`, "
    "`deal_not_finished`, `deal_sealed`, `race_in_play`, `not_a_member`).",
    404: "Nothing by that id or name (`not_found`).",
    409: "A conflict with the game or room as it is now (`stale_version`, `game_over`, "
    "`undo_unavailable`, `race_not_started`, `deal_in_play`, `no_certified_deals`, "
    "`game_in_play`, `room_full`, `room_closed`, `too_many_rooms`, `race_running`, "
    "`already_played`, `not_in_challenge`).",
    413: "The request body is too large (`payload_too_large`).",
    422: "A malformed request (`invalid_request`), an illegal move (`illegal_move`) or a reused "
    "Idempotency-Key (`idempotency_key_reused`).",
    429: "Too many requests (`rate_limited`); wait `Retry-After` seconds.",
    431: "Request headers too large (`headers_too_large`).",
    503: "The database is unavailable or the server busy (`unavailable`); try again after "
    "`Retry-After` seconds.",
}
# Refusals any API route may give: the size and admission checks run before every route.
COMMON = (413, 422, 431, 503)


def errors_of(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route: its refusals (and the common ones) as ErrorAnswer."""
    return {
        status: {"model": ErrorAnswer, "description": _WHY[status]}
        for status in sorted({*statuses, *COMMON})
    }


# -- players --------------------------------------------------------------------------------


class PlayerRef(Answer):
    id: str
    name: str


class PlayerCreated(Answer):
    id: str
    name: str
    token: str = Field(description="Send it as `Authorization: Bearer <token>`.")


def iso_or_none(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def seconds_or_none(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


class JSONBytes(Response):
    """An answer already serialized (by :func:`game_state_json` or stored): sent as it is."""

    media_type = "application/json"


def answer(model: BaseModel, status: int = 200, *, exclude_unset: bool = False) -> JSONBytes:
    """A model's JSON, written by pydantic-core at once (FastAPI's encoder would walk it
    again in Python: a millisecond or more on a 100-row leaderboard)."""
    body = model.model_dump_json(by_alias=True, exclude_unset=exclude_unset)
    return JSONBytes(body.encode(), status_code=status)
