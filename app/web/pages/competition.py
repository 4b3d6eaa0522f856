"""The competition pages: the daily challenge of each game (its standings, the player's
game and streak, the calendar of past days), the rated race queue's waiting page and the race
leaderboards. Dates and countdowns are written as UTC instants in ``<time>`` elements;
static/js/localtime.js shows them in the browser's time zone."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import date
from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import RedirectResponse, Response
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from app.engine import GAMES
from app.services.arenas import channel
from app.services.errors import (
    AlreadyPlayed,
    GameInPlay,
    InvalidRequest,
    NoCertifiedDeals,
    NotFound,
)
from app.services.rooms.feed import RoomFeed
from app.web.deps import (
    ArenasDep,
    BrowserPlayer,
    ChallengesDep,
    LeaderboardsDep,
    RaceQueueDep,
    RoomFeedDep,
    ViewerDep,
    session_key,
)
from app.web.http.ratelimit import client_address, limit_player
from app.web.i18n import gettext
from app.web.pages.htmx import is_htmx
from app.web.pages.live import EventStream
from app.web.pages.templating import render
from app.web.words import service_message

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema


def _day(text: str | None) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidRequest("A date is written YYYY-MM-DD.") from None


@router.get("/daily/{game}/challenge")
def challenge_page(
    request: Request,
    game: str,
    viewer: ViewerDep,
    challenges: ChallengesDep,
    date: Annotated[str | None, Query(max_length=10)] = None,
) -> Response:
    if game not in GAMES:
        raise NotFound("There is no such game.")
    standings = challenges.standings(game, _day(date))
    mine = challenges.status(viewer)[game]
    context = {
        "ready": mine.your_game is not None or challenges.ready(game),
        "rules": GAMES[game],
        "slug": game,
        "standings": standings,
        "mine": mine,
        "today": challenges.today(),
        "calendar": challenges.calendar(game),
    }
    return render(request, "pages/challenge.html", context)


@router.post("/daily/{game}/challenge")
def start_challenge(
    request: Request,
    game: str,
    player: BrowserPlayer,
    challenges: ChallengesDep,
) -> Response:
    """Starts the browser player's challenge game of today and opens its board."""
    limit_player(request, "games", player)
    try:
        view = challenges.start(player, game)
    except AlreadyPlayed as exc:
        return RedirectResponse(f"/games/{exc.details['game']}", status_code=303)
    except NoCertifiedDeals as exc:
        context = {"title": gettext("No challenge deal"), "message": service_message(exc)}
        return render(request, "pages/error.html", context, 409)
    return RedirectResponse(f"/games/{view.record.id}", status_code=303)


# -- the rated race queue ---------------------------------------------------------------------


@router.post("/races/queue")
def queue_for_race(
    request: Request,
    player: BrowserPlayer,
    queue: RaceQueueDep,
    game: Annotated[str, Form(max_length=64)],
) -> Response:
    """ "Race a stranger (rated)": queues the browser's player and opens the waiting page."""
    limit_player(request, "games", player)
    state = queue.join(player, game, client_address(request), session_key(request))
    if state.room is not None:
        return RedirectResponse(state.room.url, status_code=303)
    return RedirectResponse("/races/queue", status_code=303)


@router.get("/races/queue")
def queue_page(request: Request, viewer: ViewerDep, queue: RaceQueueDep) -> Response:
    state = queue.state(viewer) if viewer is not None else None
    if state is not None and state.room is not None and not is_htmx(request):
        return RedirectResponse(state.room.url, status_code=303)
    if state is not None and state.room is not None:
        return Response(status_code=200, headers={"HX-Redirect": state.room.url})
    context = {"state": state, "rules": GAMES.get(state.game or "") if state else None}
    template = "components/queue_state.html" if is_htmx(request) else "pages/queue.html"
    return render(request, template, context)


@router.post("/races/queue/leave")
def leave_race_queue(player: BrowserPlayer, queue: RaceQueueDep) -> Response:
    queue.leave(player)
    return RedirectResponse("/", status_code=303)


@router.get("/leaderboard/races/{game}")
def race_board_page(request: Request, game: str, boards: LeaderboardsDep) -> Response:
    """The race leaderboard of a game: by race rating (mu - 3 sigma)."""
    if game not in GAMES:
        raise NotFound("There is no such game.")
    context = {"rules": GAMES[game], "slug": game, "rows": boards.races(game)}
    return render(request, "pages/race_board.html", context)


# -- events (arenas) --------------------------------------------------------------------------

EventId = Annotated[int, PathParam(ge=1, le=2**31 - 1)]


@router.get("/events/{event_id}")
def event_page(
    request: Request, event_id: EventId, arenas: ArenasDep, viewer: ViewerDep
) -> Response:
    """An event: its times, how to play, and the standings (live while it runs, the results
    once it is over). A player who has joined is offered their next deal, not Join again."""
    view, rows = arenas.standings(event_id)
    context = {
        "joined": arenas.joined(event_id, viewer),
        "event": view,
        "rules": GAMES[view.game],
        "rows": rows,
        "last_event": arenas.last_event_id(event_id),
    }
    return render(request, "pages/event.html", context)


@router.post("/events/{event_id}/join")
def join_event_page(event_id: EventId, player: BrowserPlayer, arenas: ArenasDep) -> Response:
    arenas.join(event_id, player)
    return RedirectResponse(f"/events/{event_id}", status_code=303)


@router.post("/events/{event_id}/next")
def next_event_game_page(
    request: Request, event_id: EventId, player: BrowserPlayer, arenas: ArenasDep
) -> Response:
    limit_player(request, "games", player)
    try:
        view = arenas.next(event_id, player)
    except GameInPlay as exc:
        return RedirectResponse(f"/games/{exc.details['game']}", status_code=303)
    return RedirectResponse(f"/games/{view.record.id}", status_code=303)


async def _standings_stream(
    feed: RoomFeed, event_id: int, cursor: int
) -> AsyncGenerator[ServerSentEvent, None]:
    """The event's standings rows, as logged once per change: sent as they are."""
    async for row in feed.events(channel(event_id), cursor):
        yield ServerSentEvent(data=row.data, event="standings", id=str(row.id))


@router.get("/events/{event_id}/stream", response_class=EventSourceResponse)
async def event_stream(
    event_id: EventId,
    arenas: ArenasDep,
    feed: RoomFeedDep,
    after: Annotated[int | None, Query(ge=0, le=2**31 - 1)] = None,
) -> EventSourceResponse:
    """Live standings of an event: ``event: standings`` with the standings JSON, each time
    they change (a game of the event ends, a player joins)."""
    await run_in_threadpool(arenas.get, event_id)  # 404 for an unknown event
    cursor = after
    if cursor is None:
        cursor = await run_in_threadpool(arenas.last_event_id, event_id)
    return EventStream(
        _standings_stream(feed, event_id, cursor),
        ping=15,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
