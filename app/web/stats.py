"""Leaderboards, player records, replays and the deal of the day."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from app.engine import GAMES
from app.services import daily
from app.services.errors import NotFound
from app.services.leaderboard import Leaderboards, Period, parse_board_args, player_record
from app.web.board import pile_views, replay_words
from app.web.deps import ApiViewer, GamesDep, SettingsDep, ViewerDep
from app.web.htmx import is_htmx, vary_on_htmx
from app.web.templating import render

router = APIRouter()


def get_leaderboards(request: Request) -> Leaderboards:
    boards: Leaderboards = request.app.state.leaderboards
    return boards


LeaderboardsDep = Annotated[Leaderboards, Depends(get_leaderboards)]
GameArg = Annotated[str | None, Query(max_length=32)]
PeriodArg = Annotated[str | None, Query(max_length=8)]


# The JSON routes answer with JSONResponse: their data is plain already, and skipping FastAPI's
# encoder saves a millisecond or more on a 100-row board.


@router.get("/api/leaderboard", tags=["api"], response_model=None)
def leaderboard_json(
    boards: LeaderboardsDep, game: GameArg = None, period: PeriodArg = None
) -> JSONResponse:
    """Players with at least the minimum of played games, ranked by the lower bound of the 95%
    Wilson score interval of their win rate, then by wins; and each game's overall win rate.
    No ``game``: all games together. ``period``: ``all`` (default), ``30d`` or ``7d``."""
    slug, chosen = parse_board_args(game, period)
    return JSONResponse(boards.board(slug, chosen).to_json())


@router.get("/leaderboard")
def leaderboard_page(
    request: Request, boards: LeaderboardsDep, game: GameArg = None, period: PeriodArg = None
) -> Response:
    slug, chosen = parse_board_args(game, period)
    return render(
        request,
        "pages/leaderboard.html",
        {"board": boards.board(slug, chosen), "periods": list(Period)},
    )


@router.get("/api/players/{name}", tags=["api"], response_model=None)
def player_json(request: Request, name: str, viewer: ApiViewer) -> JSONResponse:
    """A player's rated record per game (and all games together), their casual games apart,
    and their recent games (``link``: what the caller may open of each)."""
    return JSONResponse(player_record(request.app.state.sessions, name, viewer).to_json())


@router.get("/players/{name}")
def player_page(request: Request, name: str, viewer: ViewerDep) -> Response:
    record = player_record(request.app.state.sessions, name, viewer)
    races = request.app.state.rooms.results_of(record.name)
    return render(request, "pages/player.html", {"record": record, "races": races})


@router.get("/games/{game_id}/replay")
def replay_page(
    request: Request,
    game_id: str,
    games: GamesDep,
    viewer: ViewerDep,
    step: Annotated[int | None, Query(ge=0, le=100_000)] = None,
) -> Response:
    """A finished game, move by move. The page opens at the deal (move 0); each step asked
    for by htmx is a fragment (every pile, the move in words, the controls), not a page."""
    replay = games.replay_view(game_id, 0 if step is None else step, viewer)
    assert replay.start is not None
    rules = replay.view.rules
    words = replay_words(rules, replay.start, replay.moves)
    context = {
        "replay": replay,
        "view": replay.view,
        "rules": rules,
        "piles": pile_views(replay.view),
        "words": words,
        "said": words[replay.step - 1] if replay.step else "The deal, before the first move",
    }
    if is_htmx(request):
        return vary_on_htmx(render(request, "components/replay_response.html", context))
    return vary_on_htmx(render(request, "pages/replay.html", context))


@router.get("/api/games/{game_id}/replay", tags=["api"])
def replay_json(
    game_id: str,
    games: GamesDep,
    viewer: ApiViewer,
    step: Annotated[int | None, Query(ge=0, le=100_000)] = None,
) -> dict[str, Any]:
    """A finished game after ``step`` moves of its log (default: all), every card shown: for
    its owner and players who have finished a game of its deal (send your bearer token)."""
    replay = games.replay_view(game_id, step, viewer)
    return {"step": replay.step, "moves": replay.moves, "game": replay.view.to_json()}


@router.get("/api/daily", tags=["api"])
def daily_json(settings: SettingsDep) -> dict[str, Any]:
    day = daily.today()
    return {"date": day.isoformat(), "deals": daily.daily_deals(day, settings.deal_key_bytes)}


@router.get("/daily/{game}")
def daily_redirect(game: str, settings: SettingsDep) -> Response:
    if game not in GAMES:
        raise NotFound("There is no such game.")
    number = daily.daily_deal(game, daily.today(), settings.deal_key_bytes)
    return RedirectResponse(f"/deal/{game}/{number}", 303)
