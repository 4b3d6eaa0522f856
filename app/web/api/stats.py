"""The JSON API's leaderboards, player records, replays, solutions and the deal of the day.
Their pages are in app/web/pages/stats.py."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from app.services import daily
from app.services.errors import InvalidRequest
from app.services.game_views import ReplayView
from app.services.leaderboard import parse_board_args
from app.web.api.schemas.base import BoardGame, BoardPeriod, JSONBytes, answer, errors_of
from app.web.api.schemas.competition import (
    DailyAnswer,
    RaceBoardAnswer,
    challenge_out,
    race_board_answer,
)
from app.web.api.schemas.game_state import ReplayAnswer, game_state_data
from app.web.api.schemas.records import LeaderboardAnswer, PlayerAnswer, leaderboard, player_answer
from app.web.deps import ApiViewer, ChallengesDep, GamesDep, LeaderboardsDep, SettingsDep

router = APIRouter()

# The JSON routes answer with the models' JSON written by pydantic-core (schemas.answer):
# FastAPI's encoder would cost a millisecond or more on a 100-row board.
BoardGameArg = Annotated[BoardGame | None, Query(description="A game, or `all` (default).")]
BoardPeriodArg = Annotated[BoardPeriod | None, Query(description="`all` (default), 30d or 7d.")]
PlayerName = Annotated[str, Path(max_length=64)]
BoardKindArg = Annotated[
    Literal["wins", "races"] | None,
    Query(description="`wins` (default: win rates) or `races` (race ratings, per game)."),
]
# A replay step beyond the log shows the end; the bound keeps the number sane.
StepArg = Annotated[int | None, Query(ge=0, le=100_000)]


@router.get(
    "/api/leaderboard",
    tags=["api"],
    response_model=LeaderboardAnswer | RaceBoardAnswer,
    responses=errors_of(),
)
def leaderboard_json(
    boards: LeaderboardsDep,
    game: BoardGameArg = None,
    period: BoardPeriodArg = None,
    board: BoardKindArg = None,
) -> JSONBytes:
    """Players with at least the minimum of played games, ranked by the lower bound of the 95%
    Wilson score interval of their win rate, then by wins; and each game's overall win rate.
    No ``game``: all games together. ``period``: ``all`` (default), ``30d`` or ``7d``.
    ``board=races`` (with a ``game``): the race leaderboard, by race rating (mu - 3 sigma)."""
    if board == "races":
        if not game or game == "all":
            raise InvalidRequest("The race leaderboard is per game: add game=<slug>.")
        return answer(race_board_answer(game, boards.races(game)))
    slug, chosen = parse_board_args(game, period)
    return answer(leaderboard(boards.board(slug, chosen)))


@router.get(
    "/api/players/{name}",
    tags=["api"],
    response_model=PlayerAnswer,
    responses=errors_of(401, 404),
)
def player_json(name: PlayerName, viewer: ApiViewer, boards: LeaderboardsDep) -> JSONBytes:
    """A player's rated record per game (and all games together), their casual games apart,
    and their recent games (``link``: what the caller may open of each)."""
    return answer(player_answer(boards.player(name, viewer)))


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


def _replay_answer(replay: ReplayView) -> JSONBytes:
    data = {"step": replay.step, "moves": replay.moves, "game": game_state_data(replay.view)}
    return answer(ReplayAnswer.model_validate(data), exclude_unset=True)


@router.get("/api/daily", tags=["api"], response_model=DailyAnswer, responses=errors_of(401))
def daily_json(settings: SettingsDep, viewer: ApiViewer, challenges: ChallengesDep) -> JSONBytes:
    """Today's deal of each game (UTC): casual games, ranked by fewest moves on the deal page;
    and each game's daily challenge for the caller (send your bearer token for your game and
    streak)."""
    day = daily.today()
    deals = daily.daily_deals(day, settings.deal_key_bytes)
    mine = challenges.status(viewer)
    data = {
        "date": day.isoformat(),
        "deals": deals,
        "challenge": {slug: challenge_out(status) for slug, status in mine.items()},
    }
    return answer(DailyAnswer.model_validate(data))
