"""The pages of leaderboards, player records, replays, solutions and the deal of the day.
Their JSON twins are in app/web/api/stats.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response

from app.engine import GAMES
from app.services import daily
from app.services.errors import NotFound
from app.services.game_views import ReplayView
from app.services.leaderboard import Period, parse_board_args
from app.web import i18n
from app.web.deps import (
    ArenasDep,
    ChallengesDep,
    GamesDep,
    LeaderboardsDep,
    ProgressDep,
    RoomsDep,
    SettingsDep,
    ViewerDep,
)
from app.web.i18n import N_
from app.web.pages.board import GameHeader, pile_views
from app.web.pages.charts import moves_histogram, streak_chart, win_rate_chart
from app.web.pages.htmx import is_htmx, vary_on_htmx
from app.web.pages.templating import render
from app.web.words import say_words

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema


GameArg = Annotated[str | None, Query(max_length=32)]
PeriodArg = Annotated[str | None, Query(max_length=8)]


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


@router.get("/players/{name}", include_in_schema=False)
def player_page(
    request: Request,
    name: str,
    viewer: ViewerDep,
    boards: LeaderboardsDep,
    rooms: RoomsDep,
    progress: ProgressDep,
    challenges: ChallengesDep,
    arenas: ArenasDep,
) -> Response:
    record = boards.player(name, viewer)
    races = rooms.results_of(record.name)
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
    context = {
        "record": record,
        "races": races,
        "charts": charts,
        "challenge_streaks": challenges.streaks_by_name(record.name),
        "event_results": arenas.results_of(record.name),
    }
    return render(request, "pages/player.html", context)


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
    return _replay_response(
        request, replay, f"/games/{game_id}/solution", i18n.gettext("The solver's line")
    )


def _replay_response(request: Request, replay: ReplayView, base: str, who: str | None) -> Response:
    assert replay.start is not None
    rules = replay.view.rules
    words = [say_words(w) for w in rules.replay_words_of(replay.start, replay.moves)]
    context = {
        "replay": {"step": replay.step, "moves": replay.moves},
        "game": GameHeader.of(replay.view),
        "rules": rules,
        "piles": pile_views(replay.view),
        "words": words,
        "said": (
            words[replay.step - 1]
            if replay.step
            else i18n.gettext("The deal, before the first move")
        ),
        "replay_base": base,
        "replay_who": who,  # None: the game's player and result
    }
    if is_htmx(request):
        return vary_on_htmx(render(request, "components/replay_response.html", context))
    return vary_on_htmx(render(request, "pages/replay.html", context))


@router.get("/daily/{game}", include_in_schema=False)
def daily_redirect(game: str, settings: SettingsDep) -> Response:
    if game not in GAMES:
        raise NotFound(N_("There is no such game."))
    number = daily.daily_deal(game, daily.today(), settings.deal_key_bytes)
    return RedirectResponse(f"/deal/{game}/{number}", 303)
