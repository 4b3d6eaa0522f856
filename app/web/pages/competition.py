"""The competition pages: the daily challenge of each game (its standings, the player's game
and streak, the calendar of past days). Dates and countdowns are written as UTC instants in
``<time>`` elements; static/js/localtime.js shows them in the browser's time zone."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response

from app.engine import GAMES
from app.services.errors import AlreadyPlayed, InvalidRequest, NoCertifiedDeals, NotFound
from app.web.deps import BrowserPlayer, ChallengesDep, ViewerDep
from app.web.http.ratelimit import limit_player
from app.web.pages.templating import render

router = APIRouter()


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
        context = {"title": "No challenge deal", "message": exc.message}
        return render(request, "pages/error.html", context, 409)
    return RedirectResponse(f"/games/{view.record.id}", status_code=303)
