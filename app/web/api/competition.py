"""The JSON API of competitions (contract v3, Competition): the daily challenge, the rated
race queue and events (arenas)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi import Path as PathParam
from pydantic import BaseModel

from app.services.errors import NotFound
from app.web.api.schemas.base import GameSlug, JSONBytes, answer, errors_of
from app.web.api.schemas.competition import (
    ChallengeStandingsAnswer,
    EventOut,
    EventsAnswer,
    EventStandingsAnswer,
    QueueAnswer,
    challenge_standings,
    event_out,
    event_standings_answer,
    queue_answer,
)
from app.web.api.schemas.game_state import GameState, state_response
from app.web.deps import ApiPlayer, ArenasDep, ChallengesDep, RaceQueueDep, session_key
from app.web.http.ratelimit import client_address, limit_player

router = APIRouter(prefix="/api", tags=["api"])

DateArg = Annotated[
    str | None,
    Query(
        pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
        description="A UTC date (YYYY-MM-DD), today or before; default today.",
    ),
]


def parse_day(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise NotFound("There is no day %(day)s.", day=text) from None


@router.post(
    "/daily/{game}",
    status_code=201,
    response_model=GameState,
    responses=errors_of(401, 409, 429),
)
def start_challenge(
    request: Request, game: GameSlug, player: ApiPlayer, challenges: ChallengesDep
) -> JSONBytes:
    """Starts the caller's one challenge game of ``game`` today (UTC): a deal of their own
    from the certified-winnable pool, played clean (no hints, no undo). A second start:
    ``409 already_played``."""
    limit_player(request, "games", player)
    return state_response(challenges.start(player, game), 201)


@router.get(
    "/daily/{game}/standings",
    response_model=ChallengeStandingsAnswer,
    responses=errors_of(404),
)
def challenge_standings_json(
    game: GameSlug, challenges: ChallengesDep, date: DateArg = None
) -> JSONBytes:
    """The day's standings (default today): wins by moves over par, then active time; games
    in play and losses after, unranked. Once the day is over the day's best games name their
    game (open as replays)."""
    return answer(challenge_standings(challenges.standings(game, parse_day(date))))


# -- the rated race queue ---------------------------------------------------------------------


class QueueRequest(BaseModel):
    game: GameSlug


@router.post("/races/queue", response_model=QueueAnswer, responses=errors_of(401, 429))
def join_queue(
    request: Request, body: QueueRequest, player: ApiPlayer, queue: RaceQueueDep
) -> JSONBytes:
    """Queues the caller for a rated race of ``game`` (again: a fresh place in the queue). The
    server forms a race of 2 to 8 queued players after a short wait, never pairing players of
    one address or browser session, or who shared a private room in the last day."""
    limit_player(request, "games", player)
    state = queue.join(player, body.game, client_address(request), session_key(request))
    return answer(queue_answer(state))


@router.get("/races/queue", response_model=QueueAnswer, responses=errors_of(401))
def queue_state(player: ApiPlayer, queue: RaceQueueDep) -> JSONBytes:
    """The caller's place in the queue, and the race once formed (``room``): poll it."""
    return answer(queue_answer(queue.state(player)))


@router.delete("/races/queue", status_code=204, responses=errors_of(401))
def leave_queue(player: ApiPlayer, queue: RaceQueueDep) -> Response:
    """Leaves the queue (a race already formed is left from its room)."""
    queue.leave(player)
    return Response(status_code=204)


# -- events (arenas) --------------------------------------------------------------------------

EventId = Annotated[int, PathParam(ge=1, le=2**31 - 1, description="The event's id.")]


@router.get("/events", response_model=EventsAnswer, responses=errors_of())
def events_json(arenas: ArenasDep) -> JSONBytes:
    """Scheduled and running events (soonest first), then the latest finished ones."""
    return answer(EventsAnswer.model_validate({"events": [event_out(a) for a in arenas.listed()]}))


@router.post("/events/{event_id}/join", response_model=EventOut, responses=errors_of(401, 404, 409))
def join_event(event_id: EventId, player: ApiPlayer, arenas: ArenasDep) -> JSONBytes:
    """Joins an event, before it starts or while it runs (joining late is allowed)."""
    return answer(EventOut.model_validate(event_out(arenas.join(event_id, player))))


@router.post(
    "/events/{event_id}/next",
    status_code=201,
    response_model=GameState,
    responses=errors_of(401, 403, 404, 409, 429),
)
def next_event_game(
    request: Request, event_id: EventId, player: ApiPlayer, arenas: ArenasDep
) -> JSONBytes:
    """The caller's next game of the running event: a deal of their own from the certified
    pool, sealed until the event ends (`409 game_in_play` while the last one is unfinished;
    `409 event_not_running` outside the event; `403 not_a_member` before joining)."""
    limit_player(request, "games", player)
    return state_response(arenas.next(event_id, player), 201)


@router.get(
    "/events/{event_id}/standings", response_model=EventStandingsAnswer, responses=errors_of(404)
)
def event_standings_json(event_id: EventId, arenas: ArenasDep) -> JSONBytes:
    """Standings: points (a win 2, doubled on a streak of two or more wins), then wins, then
    active time."""
    view, rows = arenas.standings(event_id)
    return answer(event_standings_answer(view, rows))
