"""What a player's games add up to over time, for charts: the win rate game after game, the
runs of wins, how many moves wins took; and how a win compares with the player's own others.

Counts only: no card, no deal number (a rated game in play hides its number, contract v3), so
nothing here can tell anyone what a deal holds. Rated games count from the moment they are
dealt, as in the player's record (contract v2).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Game
from app.engine import Status
from app.services.players import find_by_name

HISTORY_LIMIT = 2000  # the newest rated games a chart draws, per game


@dataclass(frozen=True, slots=True)
class GameHistory:
    """One game kind's finished rated games, oldest first: won or not, and the moves of each
    win. (Games still in play are left out: their end is not known yet.)"""

    game: str
    won: tuple[bool, ...]
    win_moves: tuple[int, ...]

    @property
    def streaks(self) -> tuple[int, ...]:
        """The length of every run of wins, in order."""
        runs, current = [], 0
        for w in self.won:
            if w:
                current += 1
            elif current:
                runs.append(current)
                current = 0
        if current:
            runs.append(current)
        return tuple(runs)


@dataclass(frozen=True, slots=True)
class OwnAverage:
    """The player's other wins of one game: how many, and their mean moves and active time."""

    wins: int
    moves: float | None
    duration_ms: float | None


class Progress:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def histories(self, name: str) -> list[GameHistory]:
        """Per game the named player has finished rated games of, the newest HISTORY_LIMIT,
        oldest first (none for an unknown name)."""
        with self.sessions() as db:
            player = find_by_name(db, name)
            return _histories(db, player.id) if player is not None else []

    def own_average(self, player_id: str, slug: str, besides: str) -> OwnAverage:
        """The player's wins of ``slug`` other than the game ``besides``."""
        with self.sessions() as db:
            row = db.execute(
                select(func.count(), func.avg(Game.moves), func.avg(Game.duration_ms)).where(
                    Game.player_id == player_id,
                    Game.game == slug,
                    Game.status == Status.WON,
                    Game.id != besides,
                )
            ).one()
        wins = int(row[0] or 0)
        return OwnAverage(
            wins,
            float(row[1]) if row[1] is not None else None,
            float(row[2]) if row[2] is not None else None,
        )


def _histories(db: Session, player_id: str) -> list[GameHistory]:
    rows = db.execute(
        select(Game.game, Game.status, Game.moves)
        .where(Game.player_id == player_id, Game.rated, Game.status != Status.PLAYING)
        .order_by(Game.created_at.desc(), Game.id.desc())
        .limit(HISTORY_LIMIT * 5)
    ).all()
    per: dict[str, list[tuple[str, int]]] = {}
    for slug, status, count in reversed(rows):
        per.setdefault(slug, []).append((status, count))
    out = []
    for slug in sorted(per):
        games = per[slug][-HISTORY_LIMIT:]
        won = tuple(status == Status.WON for status, _ in games)
        win_moves = tuple(m for status, m in games if status == Status.WON)
        out.append(GameHistory(slug, won, win_moves))
    return out
