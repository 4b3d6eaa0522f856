"""Leaderboards, player records, replays and the deal of the day."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import RedirectResponse, Response

from app.engine import GAMES
from app.services import daily
from app.services.errors import NotFound
from app.services.games import ReplayView
from app.services.leaderboard import Leaderboards, Period, parse_board_args, player_record
from app.services.progress import Progress
from app.web.board import GameHeader, pile_views
from app.web.charts import moves_histogram, streak_chart, win_rate_chart
from app.web.deps import ApiViewer, GamesDep, SettingsDep, ViewerDep
from app.web.htmx import is_htmx, vary_on_htmx
from app.web.schemas import (
    BoardGame,
    BoardPeriod,
    DailyAnswer,
    JSONBytes,
    LeaderboardAnswer,
    PlayerAnswer,
    ReplayAnswer,
    answer,
    errors_of,
    game_state_data,
    leaderboard,
    player_answer,
)
from app.web.templating import render

router = APIRouter()


def get_leaderboards(request: Request) -> Leaderboards:
    boards: Leaderboards = request.app.state.leaderboards
    return boards


LeaderboardsDep = Annotated[Leaderboards, Depends(get_leaderboards)]
GameArg = Annotated[str | None, Query(max_length=32)]
PeriodArg = Annotated[str | None, Query(max_length=8)]


# The JSON routes answer with the models' JSON written by pydantic-core (schemas.answer):
# FastAPI's encoder would cost a millisecond or more on a 100-row board.
BoardGameArg = Annotated[BoardGame | None, Query(description="A game, or `all` (default).")]
BoardPeriodArg = Annotated[BoardPeriod | None, Query(description="`all` (default), 30d or 7d.")]
PlayerName = Annotated[str, Path(max_length=64)]
# A replay step beyond the log shows the end; the bound keeps the number sane.
StepArg = Annotated[int | None, Query(ge=0, le=100_000)]


@router.get(
    "/api/leaderboard", tags=["api"], response_model=LeaderboardAnswer, responses=errors_of()
)
def leaderboard_json(
    boards: LeaderboardsDep, game: BoardGameArg = None, period: BoardPeriodArg = None
) -> JSONBytes:
    """Players with at least the minimum of played games, ranked by the lower bound of the 95%
    Wilson score interval of their win rate, then by wins; and each game's overall win rate.
    No ``game``: all games together. ``period``: ``all`` (default), ``30d`` or ``7d``."""
    slug, chosen = parse_board_args(game, period)
    return answer(leaderboard(boards.board(slug, chosen)))


@router.get("/leaderboard", include_in_schema=False)
def leaderboard_page(
    request: Request, boards: LeaderboardsDep, game: GameArg = None, period: PeriodArg = None
) -> Response:
    slug, chosen = parse_board_args(game, period)
    return render(
        request,
        "pages/leaderboard.html",
        {"board": boards.board(slug, chosen), "periods": list(Period)},
    )


@router.get(
    "/api/players/{name}",
    tags=["api"],
    response_model=PlayerAnswer,
    responses=errors_of(401, 404),
)
def player_json(request: Request, name: PlayerName, viewer: ApiViewer) -> JSONBytes:
    """A player's rated record per game (and all games together), their casual games apart,
    and their recent games (``link``: what the caller may open of each)."""
    record = player_record(request.app.state.sessions, name, viewer, request.app.state.deals.sealer)
    return answer(player_answer(record))


@router.get("/players/{name}", include_in_schema=False)
def player_page(request: Request, name: str, viewer: ViewerDep) -> Response:
    record = player_record(request.app.state.sessions, name, viewer, request.app.state.deals.sealer)
    races = request.app.state.rooms.results_of(record.name)
    progress: Progress = request.app.state.progress
    charts = [
        (
            h.game,
            [
                win_rate_chart(f"rate-{h.game}", h.won),
                streak_chart(f"runs-{h.game}", h.streaks),
                moves_histogram(f"moves-{h.game}", h.win_moves),
            ],
        )
        for h in progress.histories(record.name)
        if h.game in GAMES
    ]
    return render(
        request, "pages/player.html", {"record": record, "races": races, "charts": charts}
    )


@router.get("/games/{game_id}/replay", include_in_schema=False)
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
    return _replay_response(request, replay, f"/games/{game_id}/replay", None)


@router.get("/games/{game_id}/solution", include_in_schema=False)
def solution_page(
    request: Request,
    game_id: str,
    games: GamesDep,
    viewer: ViewerDep,
    step: Annotated[int | None, Query(ge=0, le=100_000)] = None,
) -> Response:
    """The solver's winning line for a finished game's deal, stepped through like a replay
    (the same page and fragments): once the game is over, for whoever may see its replay."""
    replay = games.solution_view(game_id, 0 if step is None else step, viewer)
    return _replay_response(request, replay, f"/games/{game_id}/solution", "The solver's line")


def _replay_response(request: Request, replay: ReplayView, base: str, who: str | None) -> Response:
    assert replay.start is not None
    rules = replay.view.rules
    words = rules.replay_words(replay.start, replay.moves)
    context = {
        "replay": {"step": replay.step, "moves": replay.moves},
        "game": GameHeader.of(replay.view),
        "rules": rules,
        "piles": pile_views(replay.view),
        "words": words,
        "said": words[replay.step - 1] if replay.step else "The deal, before the first move",
        "replay_base": base,
        "replay_who": who,  # None: the game's player and result
    }
    if is_htmx(request):
        return vary_on_htmx(render(request, "components/replay_response.html", context))
    return vary_on_htmx(render(request, "pages/replay.html", context))


def _replay_answer(replay: ReplayView) -> JSONBytes:
    data = {"step": replay.step, "moves": replay.moves, "game": game_state_data(replay.view)}
    return answer(ReplayAnswer.model_validate(data), exclude_unset=True)


@router.get(
    "/api/games/{game_id}/replay",
    tags=["api"],
    response_model=ReplayAnswer,
    responses=errors_of(401, 403, 404, 409),
)
def replay_json(
    game_id: str,
    games: GamesDep,
    viewer: ApiViewer,
    step: StepArg = None,
) -> JSONBytes:
    """A finished game after ``step`` moves of its log (default: all), every card shown: for
    its owner and players who have finished a game of its deal (send your bearer token)."""
    replay = games.replay_view(game_id, step, viewer)
    return _replay_answer(replay)


@router.get(
    "/api/games/{game_id}/solution",
    tags=["api"],
    response_model=ReplayAnswer,
    responses=errors_of(401, 403, 404, 409),
)
def solution_json(
    game_id: str,
    games: GamesDep,
    viewer: ApiViewer,
    step: StepArg = None,
) -> JSONBytes:
    """The solver's winning line for a finished game's deal (404 when the solver has none),
    and the board after ``step`` of its moves (default: all): for whoever may see the game's
    replay (its owner, players who have finished the deal)."""
    replay = games.solution_view(game_id, step, viewer)
    return _replay_answer(replay)


@router.get("/api/daily", tags=["api"], response_model=DailyAnswer, responses=errors_of())
def daily_json(settings: SettingsDep) -> JSONBytes:
    """Today's deal of each game (UTC): casual games, ranked by fewest moves on the deal page."""
    day = daily.today()
    deals = daily.daily_deals(day, settings.deal_key_bytes)
    return answer(DailyAnswer.model_validate({"date": day.isoformat(), "deals": deals}))


@router.get("/daily/{game}", include_in_schema=False)
def daily_redirect(game: str, settings: SettingsDep) -> Response:
    if game not in GAMES:
        raise NotFound("There is no such game.")
    number = daily.daily_deal(game, daily.today(), settings.deal_key_bytes)
    return RedirectResponse(f"/deal/{game}/{number}", 303)
