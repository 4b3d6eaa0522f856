"""Typed dependencies: the game service, and who is asking (browser cookie or API token).

They are ``async``: FastAPI runs a plain ``def`` dependency in its thread pool, one hop per
dependency per request, while these only read app state or an in-memory cache; the rare
database look-up goes to the thread pool explicitly.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from app.config import Settings
from app.services.deals import Deals
from app.services.errors import Unauthenticated
from app.services.games import Games
from app.services.players import Players
from app.services.solver import Solver
from app.web.newcomers import admit

SESSION_PLAYER = "pid"
SESSION_VERSION = "sv"  # the player's session_version when this session was signed in


async def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_games(request: Request) -> Games:
    games: Games = request.app.state.games
    return games


async def get_players(request: Request) -> Players:
    players: Players = request.app.state.players
    return players


async def get_deals(request: Request) -> Deals:
    deals: Deals = request.app.state.deals
    return deals


async def get_solver(request: Request) -> Solver:
    solver: Solver = request.app.state.solver
    return solver


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
GamesDep = Annotated[Games, Depends(get_games)]
PlayersDep = Annotated[Players, Depends(get_players)]
DealsDep = Annotated[Deals, Depends(get_deals)]
SolverDep = Annotated[Solver, Depends(get_solver)]


def sign_session_in(request: Request, player_id: str, version: int) -> None:
    """Makes this browser session the player's (a fresh session: a new CSRF token too)."""
    request.session.clear()
    request.session[SESSION_PLAYER] = player_id
    request.session[SESSION_VERSION] = version


async def viewer_id(request: Request, players: PlayersDep) -> str | None:
    """The browser's player if it has one and its session is still valid, else None.

    Read-only pages use this: a visitor who has not acted yet has no player row at all. A
    session whose version is older than the player's (signed out, password changed) is
    revoked: it forgets the player.
    """
    pid = request.session.get(SESSION_PLAYER)
    if not isinstance(pid, str):
        return None
    current = players.cached_session_version(pid)
    if current is None:
        current = await run_in_threadpool(players.session_version, pid)
    if current is None or current != request.session.get(SESSION_VERSION):
        request.session.pop(SESSION_PLAYER, None)
        request.session.pop(SESSION_VERSION, None)
        return None
    # The account's preferences, read with the session version: pages paint with them.
    request.state.account_prefs = players.cached_prefs(pid)
    return pid


ViewerDep = Annotated[str | None, Depends(viewer_id)]


def new_browser_player(request: Request, players: Players) -> str:
    """A new anonymous player for this browser session (rate-limited per address; past the
    free limit, a browser that did a moment of work is let in: app/web/newcomers.py)."""
    admit(request)
    player = players.create_anonymous()
    request.session[SESSION_PLAYER] = player.id
    request.session[SESSION_VERSION] = player.session_version
    return player.id


async def browser_player_id(request: Request, viewer: ViewerDep, players: PlayersDep) -> str:
    """The browser's player, created (anonymous, with a random name) when it first acts."""
    if viewer is not None:
        return viewer
    return await run_in_threadpool(new_browser_player, request, players)


async def api_player_id(request: Request, players: PlayersDep) -> str:
    """The API caller's player, from ``Authorization: Bearer <token>``; cookies are ignored."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthenticated(
            "Send Authorization: Bearer <token>; get a token from POST /api/players."
        )
    player_id = players.cached_token_owner(token)
    if player_id is None:
        player_id = await run_in_threadpool(players.id_for_token, token)
    if player_id is None:
        raise Unauthenticated("That token is not valid.")
    return player_id


async def api_viewer_id(request: Request, players: PlayersDep) -> str | None:
    """Who reads through the API: the bearer token's player, or None without a token. Reading
    needs no token, but a reader with one is held to the same-deal rule."""
    if "authorization" not in request.headers:
        return None
    return await api_player_id(request, players)


BrowserPlayer = Annotated[str, Depends(browser_player_id)]
ApiPlayer = Annotated[str, Depends(api_player_id)]
ApiViewer = Annotated[str | None, Depends(api_viewer_id)]
