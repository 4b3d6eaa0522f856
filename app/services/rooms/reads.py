"""The rooms' state and what is read of them: the event table (a client catching up, pruning),
the rooms live now, and players' race results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, delete, distinct, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.broker import EventRow
from app.db.models import Event, Game, Player, Race, RatingChange, Room, RoomMember
from app.engine import Status
from app.services.games import Games
from app.services.players import now
from app.services.ratings import shown
from app.services.rooms import events as race_events
from app.services.rooms.views import (
    CLOSED,
    EVENT_PAGE,
    PLAYING_CACHE_S,
    PLAYING_WINDOW_S,
    PRUNE_BATCH,
    Limits,
    LiveRoom,
    RaceResult,
)
from app.services.statuses import RaceStatus


@dataclass
class RoomReads:
    """The rooms' state, and what is read of them: events, the rooms live now, results."""

    sessions: sessionmaker[Session]
    games: Games
    limits: Limits = field(default_factory=Limits)
    publish: Callable[[list[int]], None] = field(default=lambda ids: None)
    clock: Callable[[], datetime] = now
    _playing: tuple[datetime, dict[str, int]] | None = field(default=None, repr=False)

    def prune_events(self, before: datetime, most: int = PRUNE_BATCH) -> int:
        """Deletes up to ``most`` events written before ``before``; returns how many.

        Event ids grow with time, so "older than" is "below the first id that is not": one
        step along the primary key from the oldest row left (no index on the time, and no
        scan of the table), and a bounded delete, so a sweep's transaction stays short
        however far behind it is (the next sweep takes the next batch).

        The newest event stays, however old: SQLite gives an emptied table's ids out again,
        and clients (``Last-Event-ID``) and the broker resume after the last id they saw."""
        with self.sessions.begin() as db:
            keep_from = db.scalar(
                select(Event.id).where(Event.created_at >= before).order_by(Event.id).limit(1)
            )
            if keep_from is None:
                keep_from = db.scalar(select(func.max(Event.id)))
            old = select(Event.id).order_by(Event.id).limit(most)
            if keep_from is not None:
                old = old.where(Event.id < keep_from)
            gone = db.execute(delete(Event).where(Event.id.in_(old.scalar_subquery())))
            return int(cast(CursorResult[Any], gone).rowcount or 0)

    # -- events -------------------------------------------------------------------------

    def events_after(self, code: str, after: int, limit: int = EVENT_PAGE) -> list[EventRow]:
        with self.sessions() as db:
            rows = db.execute(
                select(Event.id, Event.room_code, Event.kind, Event.data)
                .where(Event.room_code == code, Event.id > after)
                .order_by(Event.id)
                .limit(limit)
            ).all()
        return [EventRow(*r) for r in rows]

    def last_event_id(self, code: str) -> int:
        with self.sessions() as db:
            return int(db.scalar(select(func.max(Event.id)).where(Event.room_code == code)) or 0)

    # -- what is live, and players' results ----------------------------------------------

    def live(self, limit: int = 20) -> list[LiveRoom]:
        """Open rooms to join and races running, busiest first."""
        with self.sessions() as db:
            members = func.count(RoomMember.player_id)
            rows = db.execute(
                select(Room.code, Room.game, Room.status, members)
                .join(RoomMember, RoomMember.room_code == Room.code)
                .where(Room.status != CLOSED)
                .group_by(Room.code, Room.game, Room.status, Room.active_at)
                .order_by(Room.active_at.desc())
                .limit(limit)
            ).all()
        return [LiveRoom(*r) for r in rows]

    def playing_now(self) -> dict[str, int]:
        """How many players have moved in a game of each kind within the last
        ``PLAYING_WINDOW_S``: cached for ``PLAYING_CACHE_S`` (a scan of the games in play)."""
        stamp = self.clock()
        cached = self._playing
        if cached is not None and (stamp - cached[0]).total_seconds() < PLAYING_CACHE_S:
            return cached[1]
        cutoff = stamp - timedelta(seconds=PLAYING_WINDOW_S)
        with self.sessions() as db:
            rows = db.execute(
                select(Game.game, func.count(distinct(Game.player_id)))
                .where(Game.status == Status.PLAYING, Game.updated_at > cutoff)
                .group_by(Game.game)
            ).all()
        counts = {slug: int(n) for slug, n in rows}
        self._playing = (stamp, counts)
        return counts

    def results_of(self, name: str, limit: int = 10) -> list[RaceResult]:
        """The finished races of the player with this name (none for an unknown name)."""
        with self.sessions() as db:
            player_id = db.scalar(select(Player.id).where(Player.name_key == name.lower()))
        return [] if player_id is None else self.results(player_id, limit)

    def results(self, player_id: str, limit: int = 10) -> list[RaceResult]:
        """The player's finished races, latest first, with their place."""
        out = []
        with self.sessions() as db:
            races = db.execute(
                select(Race, Game.id)
                .join(Game, Game.race_id == Race.id)
                .where(Game.player_id == player_id, Race.status == RaceStatus.FINISHED)
                .order_by(Race.finished_at.desc())
                .limit(limit)
            ).all()
            changes = {
                change.race_id: change
                for change in db.scalars(
                    select(RatingChange).where(
                        RatingChange.player_id == player_id,
                        RatingChange.race_id.in_([race.id for race, _ in races]),
                    )
                )
            }
            for race, game_id in races:
                standings = race_events.rank(race_events.racers(db, race.id), race.starts_at)
                mine = next(s for s in standings if s.game == game_id)
                change = changes.get(race.id)
                out.append(
                    RaceResult(
                        race.room_code,
                        race.number,
                        race.game,
                        race.deal,
                        game_id,
                        mine.place,
                        len(standings),
                        mine.status,
                        None if change is None else shown(change.mu_before, change.sigma_before),
                        None if change is None else shown(change.mu_after, change.sigma_after),
                    )
                )
        return out
