"""The JSON API of competitions (contract v3, Competition): the daily challenge."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query, Request

from app.services.errors import InvalidRequest
from app.web.api.schemas import (
    ChallengeStandingsAnswer,
    GameState,
    JSONBytes,
    answer,
    challenge_standings,
    errors_of,
    state_response,
)
from app.web.deps import ApiPlayer, ChallengesDep
from app.web.http.ratelimit import limit_player

router = APIRouter(prefix="/api", tags=["api"])

DateArg = Annotated[
    str | None, Query(max_length=10, description="A past UTC date (ISO 8601); default today.")
]


def parse_day(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidRequest("A date is written YYYY-MM-DD.") from None


@router.post(
    "/daily/{game}",
    status_code=201,
    response_model=GameState,
    responses=errors_of(401, 409, 429),
)
def start_challenge(
    request: Request, game: str, player: ApiPlayer, challenges: ChallengesDep
) -> JSONBytes:
    """Starts the caller's one challenge game of ``game`` today (UTC): a deal of their own
    from the certified-winnable pool, played clean (no hints, no undo). A second start:
    ``409 already_played``."""
    limit_player(request, "games", player)
    return state_response(challenges.start(player, game), 201)


@router.get(
    "/daily/{game}/standings",
    response_model=ChallengeStandingsAnswer,
    responses=errors_of(),
)
def challenge_standings_json(
    game: str, challenges: ChallengesDep, date: DateArg = None
) -> JSONBytes:
    """The day's standings (default today): wins by moves over par, then active time; games
    in play and losses after, unranked. Once the day is over the day's best games name their
    game (open as replays)."""
    return answer(challenge_standings(challenges.standings(game, parse_day(date))))
