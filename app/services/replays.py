"""Auditing the move log: replaying every game from its deal must reproduce its stored state."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import select

from app.db.models import Game
from app.engine import EngineError
from app.services.errors import NotFound
from app.services.games import Games


@dataclass(frozen=True)
class ReplayCheck:
    game_id: str
    ok: bool
    problem: str = ""


def game_ids(games: Games) -> list[str]:
    with games.sessions() as db:
        return list(db.scalars(select(Game.id).order_by(Game.created_at, Game.id)))


def check_replay(games: Games, game_id: str) -> ReplayCheck:
    try:
        stored, replayed = games.replay(game_id)
    except NotFound as exc:
        return ReplayCheck(game_id, False, exc.message)
    except EngineError as exc:  # an illegal logged move, an unreadable state, …
        return ReplayCheck(game_id, False, f"{type(exc).__name__}: {exc}")
    if stored != replayed:
        return ReplayCheck(game_id, False, "the stored state differs from the replayed log")
    return ReplayCheck(game_id, True)


def check_replays(games: Games, only: str | None = None) -> Iterator[ReplayCheck]:
    for game_id in [only] if only is not None else game_ids(games):
        yield check_replay(games, game_id)
