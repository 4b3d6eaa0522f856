"""Typed dependencies: the game service, and who is asking (browser cookie or API token)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.config import Settings
from app.services.deals import Deals
from app.services.errors import Unauthenticated
from app.services.games import Games
from app.services.players import Players

SESSION_PLAYER = "pid"


def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_games(request: Request) -> Games:
    games: Games = request.app.state.games
    return games


def get_players(request: Request) -> Players:
    players: Players = request.app.state.players
    return players


def get_deals(request: Request) -> Deals:
    deals: Deals = request.app.state.deals
    return deals


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
GamesDep = Annotated[Games, Depends(get_games)]
PlayersDep = Annotated[Players, Depends(get_players)]
DealsDep = Annotated[Deals, Depends(get_deals)]


def browser_player_id(request: Request, players: PlayersDep) -> str:
    """The browser's player, created (anonymous, with a random name) on the first visit."""
    pid = request.session.get(SESSION_PLAYER)
    if not isinstance(pid, str) or not players.exists(pid):
        pid = players.create_anonymous().id
        request.session[SESSION_PLAYER] = pid
    return pid


def api_player_id(request: Request, players: PlayersDep) -> str:
    """The API caller's player, from ``Authorization: Bearer <token>``; cookies are ignored."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated(
            "Send Authorization: Bearer <token>; get a token from POST /api/players."
        )
    player_id = players.id_for_token(token.strip())
    if player_id is None:
        raise Unauthenticated("That token is not valid.")
    return player_id


BrowserPlayer = Annotated[str, Depends(browser_player_id)]
ApiPlayer = Annotated[str, Depends(api_player_id)]
