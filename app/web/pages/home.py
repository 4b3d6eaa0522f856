"""Pages: home, my games, shared deal links and the board (rules: rules.py; preferences and
the language: prefs.py; the account and signing in: accounts.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.engine import MAX_DEAL, Move
from app.services import daily
from app.services.game_views import GameView
from app.services.history import MyGames
from app.services.statuses import ArenaStatus
from app.web import i18n
from app.web.deps import (
    ArenasDep,
    DealsDep,
    GamesDep,
    HistoryDep,
    RoomsDep,
    SettingsDep,
    SolverDep,
    ViewerDep,
)
from app.web.i18n import N_
from app.web.pages.board import (
    CLOCK_FORMATS,
    GameHeader,
    clock_text,
    duration_words,
    pile_choices,
    pile_views,
    status_context,
)
from app.web.pages.charts import moves_histogram
from app.web.pages.play import BOARD_FLASH
from app.web.pages.rooms import race_panel
from app.web.pages.templating import render
from app.web.pages.wins import win_comparison
from app.web.words import code_label

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema


@router.get("/")
def home(
    request: Request,
    viewer: ViewerDep,
    settings: SettingsDep,
    solver: SolverDep,
    rooms: RoomsDep,
    history: HistoryDep,
    arenas: ArenasDep,
) -> Response:
    return render(
        request,
        "pages/home.html",
        {
            "in_progress": history.in_progress(viewer, 5) if viewer else [],
            "max_deal": MAX_DEAL,
            "daily": daily.daily_deals(daily.today(), settings.deal_key_bytes),
            "live": rooms.live(10),
            "playing_now": rooms.playing_now(),
            "certified": solver.certified_games(),
            "events": [e for e in arenas.listed() if e.status != ArenaStatus.FINISHED],
        },
    )


@router.get("/my-games")
def my_games(request: Request, viewer: ViewerDep, history: HistoryDep) -> Response:
    mine = history.of(viewer) if viewer else MyGames([], [])
    return render(
        request,
        "pages/my_games.html",
        {"mine": mine, "clock": clock_text},
    )


@router.get("/deal/{game}/{number}")
def deal_page(
    request: Request,
    game: str,
    number: str,
    deals: DealsDep,
    viewer: ViewerDep,
    settings: SettingsDep,
) -> Response:
    summary = deals.summary(game, number, viewer)
    cap = duration_words(int(settings.idle_cap_seconds))
    # The finished games' moves, drawn only from the list the page may show this viewer.
    shown = summary.finished if summary.replays_open else []
    wins = [g.moves for g in shown if g.status == "won"]
    chart = moves_histogram("deal-moves", wins, N_("Moves per win on this deal")) if wins else None
    return render(
        request,
        "pages/deal.html",
        {"deal": summary, "rules": summary.rules, "idle_cap": cap, "chart": chart},
    )


@router.get("/games/{game_id}")
def board(request: Request, game_id: str, viewer: ViewerDep, games: GamesDep) -> Response:
    view = games.get(game_id, viewer)
    flash = request.session.pop(BOARD_FLASH, None)
    said = flash if isinstance(flash, dict) and flash.get("game") == game_id else {}
    owner = viewer is not None and view.record.player_id == viewer
    mine = owner and not view.finished
    status = status_context(view, owner, win_comparison(request, view, viewer), watching=not owner)
    # A race's game shows its owner the race beside the board, live (app/web/pages/rooms.py).
    race = (race_panel(request, view, viewer) if viewer is not None else None) or {}
    response = render(
        request,
        "pages/game.html",
        {
            **race,
            "race_panel": bool(race),
            "game": GameHeader.of(view),
            "rules": view.rules,
            "piles": pile_views(view),
            "status": status,
            "mine": mine,
            "announce": {"text": said.get("text", ""), "error": bool(said.get("error"))},
            "choices": pile_choices(view.rules),
            "clock_formats": " ".join(CLOCK_FORMATS),  # the running clock's face, as the server's
            "note": view.rules.table_note,
            "runs": view.rules.runs_move,
            "has_stock": "stock" in view.rules.layout.index,
            # Without JavaScript the legal moves are offered as buttons (they reveal nothing).
            "nojs_moves": _moves_in_words(view, [str(m) for m in view.legal_moves]),
            # The guide's words on the clock's idle cap (the status bar, sent with every move,
            # leaves them out).
            "cap_text": duration_words(view.idle_cap_ms // 1000),
        },
    )
    # Back (or a restored tab) must show the board as it is now, not as it was first loaded.
    response.headers["Cache-Control"] = "no-store"
    return response


def _moves_in_words(view: GameView, legal: list[str]) -> list[tuple[str, str]]:
    piles = view.piles()
    out = []
    for notation in legal:
        move = Move.parse(notation)
        if move.source == "stock":
            words = i18n.gettext("Deal from the stock")
        elif move.target == "stock":
            words = i18n.gettext("Turn the waste over (redeal)")
        else:
            cards = piles[move.source].cards or ()
            first = cards[-move.count] if len(cards) >= move.count else None
            what = code_label(first) if first else "?"
            if move.count > 1:
                what = i18n.say_n(
                    "%(card)s and %(n)s more", "%(card)s and %(n)s more", move.count - 1, card=what
                )
            words = f"{what}: {move.source} → {move.target}"
        out.append((notation, words))
    return out
