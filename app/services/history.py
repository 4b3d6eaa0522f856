"""A player's own games: the unfinished ones to resume (from any device they sign in on) and
the latest finished ones."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Game
from app.engine import Status
from app.services.players import now
from app.services.seal import Sealer, number_secret, shown_number


@dataclass(frozen=True, slots=True)
class PlayedGame:
    id: str
    game: str
    deal: int | None  # None while it is sealed (app/services/seal.py)
    status: str
    moves: int
    started_at: datetime | None  # the first move; None until one is made
    updated_at: datetime
    duration_ms: int | None
    # A finished game of a sealed deal (app/services/seal.py): no replay until the seal lifts.
    sealed: bool = False


@dataclass(frozen=True, slots=True)
class MyGames:
    in_progress: list[PlayedGame]
    finished: list[PlayedGame]


class History:
    def __init__(self, sessions: sessionmaker[Session], sealer: Sealer | None = None) -> None:
        self.sessions = sessions
        self.sealer = sealer  # for finished games: whether their deal is sealed

    def in_progress(self, player_id: str, limit: int = 20) -> list[PlayedGame]:
        """The player's unfinished games, latest first, to resume from any device."""
        with self.sessions() as db:
            return self._games(db, player_id, playing=True, limit=limit)

    def of(self, player_id: str, limit: int = 50) -> MyGames:
        """The player's games in progress and finished games, latest activity first."""
        with self.sessions() as db:
            return MyGames(
                self._games(db, player_id, playing=True, limit=limit),
                self._games(db, player_id, playing=False, limit=limit),
            )

    def _games(self, db: Session, player_id: str, *, playing: bool, limit: int) -> list[PlayedGame]:
        at = self.sealer.clock() if self.sealer else now()  # one clock for every seal
        query = select(Game, number_secret(at).label("race_on")).where(Game.player_id == player_id)
        if playing:
            query = query.where(Game.status == Status.PLAYING)
        else:
            query = query.where(Game.status != Status.PLAYING)
        rows = db.execute(query.order_by(Game.updated_at.desc(), Game.id).limit(limit)).all()
        seals = (
            {}
            if playing or self.sealer is None
            else self.sealer.of_many(db, {(g.game, g.deal) for g, _ in rows})
        )
        return [
            PlayedGame(
                g.id,
                g.game,
                shown_number(g.deal, rated=g.rated, status=g.status, race_on=race_on),
                g.status,
                g.moves,
                g.first_move_at,
                g.updated_at,
                g.duration_ms,
                seals.get((g.game, g.deal)) is not None,
            )
            for g, race_on in rows
        ]
