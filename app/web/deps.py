"""Typed dependencies: the game service, and who is asking (browser cookie or API token).

They are ``async``: FastAPI runs a plain ``def`` dependency in its thread pool, one hop per
dependency per request, while these only read app state or an in-memory cache. The browser's
session check reads the database when the players service no longer remembers the session's
version (app/services/players.py: minutes while the database's notifications of changes are
heard, else seconds), awaited on the event loop where the move store has connections of it
(issue 26); the rarer look-ups (a new token, a new player) go to the thread pool explicitly.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from app.config import Settings
from app.services.accounts import Accounts
from app.services.arenas import Arenas
from app.services.availability import Health
from app.services.challenge import Challenges
from app.services.deals import Deals
from app.services.errors import Unauthenticated
from app.services.games import Games
from app.services.history import History
from app.services.leaderboard import Leaderboards
from app.services.players import Players
from app.services.progress import Progress
from app.services.race_queue import RaceQueue
from app.services.rooms.feed import RoomFeed
from app.services.rooms.rooms import Rooms
from app.services.solver import Solver
from app.web.http.newcomers import admit
from app.web.http.ratelimit import RateLimits
from app.web.http.signin_guard import SignInGuard

SESSION_PLAYER = "pid"
SESSION_VERSION = "sv"  # the player's session_version when this session was signed in
SESSION_BROWSER = "bid"  # a random id of this browser, kept across sign-ins (the race queue)


def session_key(request: Request) -> str:
    """The browser session a request comes from, for the race queue's pairing rule: the
    browser's id (made on first use), or for an API caller its token's digest."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "token:" + hashlib.sha256(token.strip().encode()).hexdigest()[:40]
    browser = request.session.get(SESSION_BROWSER)
    if not isinstance(browser, str):
        browser = secrets.token_urlsafe(16)
        request.session[SESSION_BROWSER] = browser
    return "browser:" + browser


def _service(name: str) -> Any:
    """A dependency that hands a route one of the services built in app/bootstrap.py."""

    async def get(request: Request) -> Any:
        return getattr(request.app.state.services, name)

    get.__name__ = f"get_{name}"
    return Depends(get)


async def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_limits(request: Request) -> RateLimits:
    limits: RateLimits = request.app.state.limits
    return limits


async def get_signin_guard(request: Request) -> SignInGuard:
    guard: SignInGuard = request.app.state.signin_guard
    return guard


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
LimitsDep = Annotated[RateLimits, Depends(get_limits)]
SignInGuardDep = Annotated[SignInGuard, Depends(get_signin_guard)]
GamesDep = Annotated[Games, _service("games")]
PlayersDep = Annotated[Players, _service("players")]
AccountsDep = Annotated[Accounts, _service("accounts")]
DealsDep = Annotated[Deals, _service("deals")]
SolverDep = Annotated[Solver, _service("solver")]
RoomsDep = Annotated[Rooms, _service("rooms")]
RoomFeedDep = Annotated[RoomFeed, _service("feed")]
ProgressDep = Annotated[Progress, _service("progress")]
LeaderboardsDep = Annotated[Leaderboards, _service("leaderboards")]
HistoryDep = Annotated[History, _service("history")]
HealthDep = Annotated[Health, _service("health")]
ChallengesDep = Annotated[Challenges, _service("challenges")]
RaceQueueDep = Annotated[RaceQueue, _service("race_queue")]
ArenasDep = Annotated[Arenas, _service("arenas")]


def sign_session_in(request: Request, player_id: str, version: int) -> None:
    """Makes this browser session the player's (a fresh session: a new CSRF token too). The
    browser's id stays: one browser is one session for the race queue, whoever signs in."""
    browser = request.session.get(SESSION_BROWSER)
    request.session.clear()
    if isinstance(browser, str):
        request.session[SESSION_BROWSER] = browser
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
        current = await players.session_version_async(pid)
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
    free limit, a browser that did a moment of work is let in: app/web/http/newcomers.py)."""
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
        player_id = await players.id_for_token_async(token)
    if player_id is None:
        raise Unauthenticated("That token is not valid.")
    # The account's chosen language, when known, words the API's error messages.
    request.state.account_prefs = players.cached_prefs(player_id)
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
