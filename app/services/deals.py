"""A deal's public record: how everyone has fared on the same cards."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Game, Player
from app.engine import GAMES, MAX_DEAL, Ruleset, Status
from app.services.errors import NotFound

FINISHED_LISTED = 50


@dataclass(frozen=True)
class FinishedGame:
    id: str
    player: str
    status: str
    moves: int
    duration_ms: int | None
    finished_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "player": self.player,
            "status": self.status,
            "moves": self.moves,
            "seconds": None if self.duration_ms is None else self.duration_ms / 1000,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


@dataclass(frozen=True)
class DealSummary:
    rules: Ruleset
    number: int
    played: int
    won: int
    fewest_moves: FinishedGame | None
    fastest: FinishedGame | None
    finished: list[FinishedGame]

    @property
    def win_rate(self) -> float | None:
        return self.won / self.played if self.played else None

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.rules.slug,
            "deal": self.number,
            "played": self.played,
            "won": self.won,
            "win_rate": self.win_rate,
            "fewest_moves": self.fewest_moves.to_json() if self.fewest_moves else None,
            "fastest": self.fastest.to_json() if self.fastest else None,
            "finished": [g.to_json() for g in self.finished],
        }


def parse_deal(slug: str, number: str | int) -> tuple[Ruleset, int]:
    """The ruleset and deal number of a deal address, or NotFound for anything else."""
    rules = GAMES.get(slug)
    text = str(number)
    # isascii: str.isdigit() also accepts digits like "²" that int() refuses.
    digits = text.isascii() and text.isdigit() and len(text) <= 16
    if rules is None or not digits or not 1 <= int(text) <= MAX_DEAL:
        raise NotFound("There is no such deal: check the game name and the deal number.")
    return rules, int(text)


class Deals:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def summary(self, slug: str, number: str | int) -> DealSummary:
        rules, deal = parse_deal(slug, number)
        played_here = (Game.game == slug, Game.deal == deal, Game.first_move_at.is_not(None))
        won = (*played_here, Game.status == Status.WON)
        games = select(Game, Player.name).join(Player, Player.id == Game.player_id)
        with self.sessions() as db:
            played, wins = db.execute(
                select(func.count(), func.coalesce(func.sum(case((won[-1], 1), else_=0)), 0))
                .select_from(Game)
                .where(*played_here)
            ).one()
            fewest = db.execute(games.where(*won).order_by(Game.moves, Game.duration_ms)).first()
            fastest = db.execute(games.where(*won).order_by(Game.duration_ms, Game.moves)).first()
            finished = db.execute(
                games.where(*played_here, Game.status != Status.PLAYING)
                .order_by(Game.finished_at.desc())
                .limit(FINISHED_LISTED)
            ).all()
        return DealSummary(
            rules,
            deal,
            int(played),
            int(wins),
            _finished(fewest[0], fewest[1]) if fewest else None,
            _finished(fastest[0], fastest[1]) if fastest else None,
            [_finished(row[0], row[1]) for row in finished],
        )


def _finished(g: Game, name: str) -> FinishedGame:
    return FinishedGame(g.id, name, g.status, g.moves, g.duration_ms, g.finished_at)
