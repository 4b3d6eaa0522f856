"""Pages: home, shared deal links, the board, rules, and the player's account."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from markdown_it import MarkdownIt
from markupsafe import Markup

from app.config import PROJECT_DIR
from app.engine import GAMES, MAX_DEAL, Move
from app.engine.cards import label_of, parse_code
from app.services import daily
from app.services.errors import NotFound, ServiceError
from app.services.games import GameView
from app.services.history import History
from app.web.board import RUN_GAMES, clock_text, pile_choices, pile_views, status_context
from app.web.deps import (
    SESSION_PLAYER,
    BrowserPlayer,
    DealsDep,
    GamesDep,
    PlayersDep,
    SettingsDep,
)
from app.web.play import BOARD_FLASH
from app.web.room_pages import race_panel
from app.web.templating import PREF_FLAGS, PREFS_COOKIE, PREFS_MAX_AGE, Prefs, render

router = APIRouter()
SAFE_BACK = re.compile(r"/(?![/\\])[A-Za-z0-9/_.~%?=&-]*")

# One line per game for the home page: what the table looks like and what makes it different.
BLURBS = {
    "quadrangle": "Two decks. Twelve piles build down in suit, wrapping from Ace to King; eight "
    "foundations climb from a base rank the deal chooses.",
    "quadruple-interchange": "Four decks, 208 cards. Eleven deep piles hide every other card "
    "face down; runs in suit move together on the way to sixteen foundations.",
    "corners": "One deck. Four foundations in the corners, each from its own base card, fed "
    "from a cross of five reserves. Three passes through the stock.",
    "castles-end": "One deck, every card face up. You choose the base rank with your first "
    "foundation move; ten piles build up or down in suit.",
    "patriarchs": "Two decks. Aces build up on one side, Kings down on the other, fed from a "
    "three-by-three reserve; the two meet in the middle.",
}

# What the table shows that the cards alone do not say.
TABLE_NOTES = {
    "quadrangle": "Foundations build up in suit from the base rank, past the King; piles build "
    "down in suit, a King may go on an Ace.",
    "quadruple-interchange": "Foundations build Ace to King in suit; piles build down in suit, "
    "and a run in suit moves together.",
    "corners": "Foundations in the corners build up in suit from their own base card; the "
    "reserves in the cross and the waste feed them.",
    "castles-end": "Your first foundation card sets the base rank; piles build up or down in "
    "suit, an Ace and a King are not neighbours.",
    "patriarchs": "Left column: Aces building up ↑. Right column: Kings building down ↓. The "
    "3×3 reserve and the waste feed them.",
}


def history(request: Request) -> History:
    return History(request.app.state.sessions)


@router.get("/")
def home(
    request: Request, player: BrowserPlayer, games: GamesDep, settings: SettingsDep
) -> Response:
    return render(
        request,
        "pages/home.html",
        {
            "in_progress": games.in_progress(player, 5),
            "max_deal": MAX_DEAL,
            "blurbs": BLURBS,
            "daily": daily.daily_deals(daily.today(), settings.deal_key_bytes),
            "live": request.app.state.rooms.live(10),
            "playing_now": request.app.state.rooms.playing_now(),
        },
    )


@router.get("/my-games")
def my_games(request: Request, player: BrowserPlayer) -> Response:
    mine = history(request).of(player)
    return render(
        request,
        "pages/my_games.html",
        {"mine": mine, "clock": clock_text},
    )


@router.get("/deal/{game}/{number}")
def deal_page(
    request: Request, game: str, number: str, deals: DealsDep, viewer: BrowserPlayer
) -> Response:
    summary = deals.summary(game, number, viewer)
    return render(request, "pages/deal.html", {"deal": summary, "rules": summary.rules})


@router.get("/games/{game_id}")
def board(request: Request, game_id: str, player: BrowserPlayer, games: GamesDep) -> Response:
    view = games.get(game_id, player)
    flash = request.session.pop(BOARD_FLASH, None)
    said = flash if isinstance(flash, dict) and flash.get("game") == game_id else {}
    mine = view.record.player_id == player and not view.finished
    status = status_context(view)
    # A race's game shows its owner the race beside the board, live (app/web/room_pages.py).
    race = race_panel(request, view, player) or {}
    return render(
        request,
        "pages/game.html",
        {
            **race,
            "race_panel": bool(race),
            "view": view,
            "rules": view.rules,
            "piles": pile_views(view),
            "status": status,
            "mine": mine,
            "announce": {"text": said.get("text", ""), "error": bool(said.get("error"))},
            "choices": pile_choices(view.rules),
            "note": TABLE_NOTES.get(view.rules.slug, ""),
            "runs": view.rules.slug in RUN_GAMES,
            "has_stock": "stock" in view.rules.layout.index,
            # Without JavaScript the legal moves are offered as buttons (they reveal nothing).
            "nojs_moves": _moves_in_words(view, status["legal_moves"]),
        },
    )


def _moves_in_words(view: GameView, legal: list[str]) -> list[tuple[str, str]]:
    piles = view.piles()
    out = []
    for notation in legal:
        move = Move.parse(notation)
        if move.source == "stock":
            words = "Deal from the stock"
        elif move.target == "stock":
            words = "Turn the waste over (redeal)"
        else:
            cards = piles[move.source].get("cards") or []
            first = cards[-move.count] if len(cards) >= move.count else None
            what = label_of(parse_code(first)) if first else "?"
            if move.count > 1:
                what = f"{what} and {move.count - 1} more"
            words = f"{what}: {move.source} → {move.target}"
        out.append((notation, words))
    return out


@router.post("/prefs")
def save_prefs(
    request: Request,
    auto: Annotated[str, Form(max_length=8)] = "",
    four: Annotated[str, Form(max_length=8)] = "",
    large: Annotated[str, Form(max_length=8)] = "",
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    chosen = {name for name, value in (("auto", auto), ("four", four), ("large", large)) if value}
    prefs = Prefs(frozenset(chosen & PREF_FLAGS.keys()))
    # Only a path on this site: never an open redirect.
    target = back if SAFE_BACK.fullmatch(back) else "/"
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        PREFS_COOKIE, prefs.cookie(), max_age=PREFS_MAX_AGE, samesite="lax", httponly=False
    )
    return response


@lru_cache(maxsize=8)
def _rules_html(slug: str) -> Markup:
    text = (PROJECT_DIR / "docs" / "rules" / f"{slug}.md").read_text(encoding="utf-8")
    # The rule pages are our own files; html=False still keeps any raw HTML out.
    return Markup(MarkdownIt("commonmark", {"html": False}).enable("table").render(text))


@router.get("/rules/{game}")
def rules_page(request: Request, game: str) -> Response:
    rules = GAMES.get(game)
    if rules is None:
        raise NotFound("There is no such game.")
    return render(request, "pages/rules.html", {"rules": rules, "body": _rules_html(game)})


@router.get("/account")
def account(request: Request, player: BrowserPlayer, players: PlayersDep) -> Response:
    me = players.get(player)
    return render(
        request,
        "pages/account.html",
        {
            "me": me,
            "has_password": bool(me and me.password_hash),
            "flash": request.session.pop("flash", None),
        },
    )


def _refused(request: Request, title: str, exc: ServiceError) -> Response:
    return render(request, "pages/error.html", {"title": title, "message": exc.message}, exc.status)


def _back_to_account(request: Request, message: str) -> Response:
    request.session["flash"] = message
    return RedirectResponse("/account", status_code=303)


@router.post("/account/name")
def choose_name(
    request: Request,
    name: Annotated[str, Form(max_length=64)],
    player: BrowserPlayer,
    players: PlayersDep,
) -> Response:
    try:
        players.rename(player, name.strip())
    except ServiceError as exc:
        return _refused(request, "Name not changed", exc)
    return _back_to_account(request, f"You are now {name.strip()}.")


@router.post("/account/password")
def choose_password(
    request: Request,
    password: Annotated[str, Form(max_length=300)],
    player: BrowserPlayer,
    players: PlayersDep,
) -> Response:
    try:
        players.set_password(player, password)
    except ServiceError as exc:
        return _refused(request, "Password not set", exc)
    return _back_to_account(request, "Password set: you can now sign in on another device.")


@router.post("/signin")
def sign_in(
    request: Request,
    name: Annotated[str, Form(max_length=64)],
    password: Annotated[str, Form(max_length=300)],
    players: PlayersDep,
) -> Response:
    try:
        player = players.sign_in(name.strip(), password)
    except ServiceError as exc:
        return _refused(request, "Not signed in", exc)
    request.session[SESSION_PLAYER] = player.id
    return _back_to_account(request, f"Signed in as {player.name}.")


@router.post("/signout")
def sign_out(request: Request) -> Response:
    request.session.clear()
    return RedirectResponse("/", status_code=303)
