"""Pages: home, shared deal links, the board, rules, and the player's account."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from markdown_it import MarkdownIt
from markupsafe import Markup

from app.config import PROJECT_DIR
from app.engine import GAMES, MAX_DEAL
from app.services.errors import NotFound, ServiceError
from app.web.board import pile_views, status_context
from app.web.deps import SESSION_PLAYER, BrowserPlayer, DealsDep, GamesDep, PlayersDep
from app.web.templating import render

router = APIRouter()


@router.get("/")
def home(request: Request, player: BrowserPlayer, games: GamesDep) -> Response:
    return render(
        request,
        "pages/home.html",
        {"in_progress": games.in_progress(player), "max_deal": MAX_DEAL},
    )


@router.get("/deal/{game}/{number}")
def deal_page(request: Request, game: str, number: str, deals: DealsDep) -> Response:
    summary = deals.summary(game, number)
    return render(request, "pages/deal.html", {"deal": summary, "rules": summary.rules})


@router.get("/games/{game_id}")
def board(request: Request, game_id: str, player: BrowserPlayer, games: GamesDep) -> Response:
    view = games.get(game_id)
    flash = request.session.pop("flash", None)
    return render(
        request,
        "pages/game.html",
        {
            "view": view,
            "rules": view.rules,
            "piles": pile_views(view),
            "status": status_context(view),
            "mine": view.record.player_id == player,
            "flash": flash,
        },
    )


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
        return render(
            request,
            "pages/error.html",
            {"title": "Name not changed", "message": exc.message},
            exc.status,
        )
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
        return render(
            request,
            "pages/error.html",
            {"title": "Password not set", "message": exc.message},
            exc.status,
        )
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
        return render(
            request,
            "pages/error.html",
            {"title": "Not signed in", "message": exc.message},
            exc.status,
        )
    request.session[SESSION_PLAYER] = player.id
    return _back_to_account(request, f"Signed in as {player.name}.")


@router.post("/signout")
def sign_out(request: Request) -> Response:
    request.session.clear()
    return RedirectResponse("/", status_code=303)
