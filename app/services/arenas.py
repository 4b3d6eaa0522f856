"""Events (arenas, contract v3, Competition): a game, a start and an end; each joined player
plays deals of their own from the certified pool, one after another (``next``), sealed until
the event ends.

Scoring (lichess's Arena): a win scores 2 points, a loss 0, and a win while the player is on a
streak of two or more wins (the two games before it won) scores double, 4. A game counts when it
ends, if it was dealt during the event (a game in play at the end still counts when it ends).
Standings: points, then wins, then active time (less first), then the name.

Standings are derived from the stored games on every read (app/services/arena_standings.py:
the database scores them, one row per player), and when an event game ends its new
standings are written once, as JSON, to the event log under ``@<id>`` and published through
the broker (app/db/broker.py): every process streams that one row to its clients as
``event: standings`` — rendered once per change, not per client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Arena, ArenaGame, ArenaPlayer, Event, Game, Player, as_utc
from app.engine import GAMES, Status, UnknownGame, get_ruleset
from app.services import pool
from app.services.arena_standings import ArenaStanding, standings_json, standings_of
from app.services.errors import (
    GameInPlay,
    InvalidRequest,
    NotAMember,
    NotFound,
    ServiceError,
)
from app.services.game_views import GameView
from app.services.games import Games
from app.services.statuses import ArenaStatus

log = logging.getLogger(__name__)

STANDINGS_KIND = "standing"  # the event log's kind (8 characters at most); SSE "standings"
MAX_MINUTES = 7 * 24 * 60
MAX_REPEATS = 366
LISTED_FINISHED = 20


class EventNotRunning(ServiceError):
    status, code = 409, "event_not_running"


def channel(arena_id: int) -> str:
    """The event log's key of an event's live standings (room codes never start with @)."""
    return f"@{arena_id}"


@dataclass(frozen=True)
class ArenaView:
    id: int
    game: str
    starts_at: datetime
    ends_at: datetime
    status: ArenaStatus
    players: int


def status_at(arena: Any, at: datetime) -> ArenaStatus:
    starts, ends = as_utc(arena.starts_at), as_utc(arena.ends_at)
    assert starts is not None and ends is not None
    if at < starts:
        return ArenaStatus.SCHEDULED
    return ArenaStatus.RUNNING if at < ends else ArenaStatus.FINISHED


@dataclass
class Arenas:
    sessions: sessionmaker[Session]
    games: Games
    deal_key: bytes
    publish: Callable[[list[int]], None] = lambda ids: None
    # Events whose standings changed and are not yet published, and whether a thread of this
    # process is publishing them (:meth:`standings_changed`).
    _changed: set[int] = field(default_factory=set, init=False, repr=False)
    _publishing: bool = field(default=False, init=False, repr=False)
    _mutex: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    # Seconds between two publications of one process: each reads the event's every game and
    # words the whole table, CPU that a worker's event loop (the moves) shares.
    standings_interval_s: float = 0.5

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.games.sealer.clock

    # -- operators -----------------------------------------------------------------------

    def create(
        self,
        slug: str,
        starts_at: datetime,
        minutes: int,
        every_minutes: int | None = None,
        times: int = 1,
    ) -> list[ArenaView]:
        """Schedules an event (``times`` of them, ``every_minutes`` apart)."""
        try:
            get_ruleset(slug)
        except UnknownGame as exc:
            raise InvalidRequest.of(exc.words) from None
        if starts_at.tzinfo is None:
            raise InvalidRequest("Give the start with its time zone, e.g. 2026-12-01T18:00Z.")
        if not 1 <= minutes <= MAX_MINUTES:
            raise InvalidRequest("An event lasts 1 to %(max)s minutes.", max=MAX_MINUTES)
        if not 1 <= times <= MAX_REPEATS:
            raise InvalidRequest("An event repeats 1 to %(max)s times.", max=MAX_REPEATS)
        if times > 1 and (every_minutes is None or every_minutes < minutes):
            raise InvalidRequest("Repeated events start at least their length apart (--every).")
        stamp = self.clock()
        ids = []
        with self.sessions.begin() as db:
            for n in range(times):
                start = starts_at + timedelta(minutes=(every_minutes or 0) * n)
                ids.append(
                    db.execute(
                        insert(Arena)
                        .values(
                            game=slug,
                            starts_at=start,
                            ends_at=start + timedelta(minutes=minutes),
                            created_at=stamp,
                        )
                        .returning(Arena.id)
                    ).scalar_one()
                )
        return [self.get(i) for i in ids]

    # -- reading -------------------------------------------------------------------------

    def get(self, arena_id: int) -> ArenaView:
        with self.sessions() as db:
            return self._view(db, self._arena(db, arena_id))

    def listed(self) -> list[ArenaView]:
        """Scheduled and running events (soonest first), then the latest finished ones."""
        at = self.clock()
        with self.sessions() as db:
            open_ = db.scalars(
                select(Arena).where(Arena.ends_at > at).order_by(Arena.starts_at, Arena.id)
            ).all()
            done = db.scalars(
                select(Arena)
                .where(Arena.ends_at <= at)
                .order_by(Arena.ends_at.desc(), Arena.id.desc())
                .limit(LISTED_FINISHED)
            ).all()
            return [self._view(db, a) for a in (*open_, *done)]

    def standings(self, arena_id: int) -> tuple[ArenaView, list[ArenaStanding]]:
        with self.sessions() as db:
            arena = self._arena(db, arena_id)
            return self._view(db, arena), standings_of(db, arena_id)

    def results_of(self, name: str) -> list[tuple[ArenaView, ArenaStanding]]:
        """A player's place in each event they joined, latest first (the player page)."""
        with self.sessions() as db:
            player = db.scalar(select(Player).where(Player.name == name))
            if player is None:
                return []
            arenas = db.scalars(
                select(Arena)
                .join(ArenaPlayer, ArenaPlayer.arena_id == Arena.id)
                .where(ArenaPlayer.player_id == player.id)
                .order_by(Arena.starts_at.desc())
                .limit(20)
            ).all()
            out = []
            for arena in arenas:
                mine = [s for s in standings_of(db, arena.id) if s.player == player.name]
                if mine:
                    out.append((self._view(db, arena), mine[0]))
            return out

    # -- players -------------------------------------------------------------------------

    def joined(self, arena_id: int, player_id: str | None) -> bool:
        """Whether the player has joined the event (None: a visitor with no player yet)."""
        if player_id is None:
            return False
        with self.sessions() as db:
            return db.get(ArenaPlayer, (arena_id, player_id)) is not None

    def join(self, arena_id: int, player_id: str) -> ArenaView:
        """Joins an event (before it starts or while it runs: joining late is allowed)."""
        with self.sessions() as db:
            arena = self._arena(db, arena_id)
            if status_at(arena, self.clock()) == ArenaStatus.FINISHED:
                raise EventNotRunning("This event is over.")
        try:
            with self.sessions.begin() as db:
                db.execute(
                    insert(ArenaPlayer).values(
                        arena_id=arena_id, player_id=player_id, joined_at=self.clock()
                    )
                )
        except IntegrityError:
            pass  # joined already: joining twice is joining
        self.publish_standings(arena_id)
        return self.get(arena_id)

    def next(self, arena_id: int, player_id: str) -> GameView:
        """The joined player's next game of the running event: a deal of their own."""
        with self.sessions.begin() as db:
            arena = self._arena(db, arena_id)
            if status_at(arena, self.clock()) != ArenaStatus.RUNNING:
                raise EventNotRunning("This event is not running: deals are dealt while it is.")
            if db.get(ArenaPlayer, (arena_id, player_id)) is None:
                raise NotAMember("Join the event first.")
            playing = db.scalar(
                select(Game.id)
                .join(ArenaGame, ArenaGame.game_id == Game.id)
                .where(
                    ArenaGame.arena_id == arena_id,
                    ArenaGame.player_id == player_id,
                    Game.status == Status.PLAYING,
                )
            )
            if playing is not None:
                exc = GameInPlay("Finish your game of this event first (or resign it).")
                exc.details = {"game": playing}
                raise exc
            seq = 1 + (
                db.scalar(
                    select(func.max(ArenaGame.seq)).where(
                        ArenaGame.arena_id == arena_id, ArenaGame.player_id == player_id
                    )
                )
                or 0
            )
            ends = as_utc(arena.ends_at)
            assert ends is not None
            deal, _par = pool.claim(
                db,
                arena.game,
                self.deal_key,
                f"event|{arena_id}|{player_id}|{seq}",
                player_id=player_id,
                kind=pool.EVENT,
                sealed_until=ends,
                stamp=self.clock(),
            )
            view = self.games.deal_own(db, player_id, arena.game, deal, pool.EVENT)
            db.execute(
                insert(ArenaGame).values(
                    game_id=view.record.id, arena_id=arena_id, player_id=player_id, seq=seq
                )
            )
        return view

    # -- live standings ------------------------------------------------------------------

    def game_ended(self, game_id: str) -> None:
        """After a competition game ended: its event's standings are published anew, soon."""
        with self.sessions() as db:
            arena_id = db.scalar(select(ArenaGame.arena_id).where(ArenaGame.game_id == game_id))
        if arena_id is not None:
            self.standings_changed(arena_id)

    def standings_changed(self, arena_id: int) -> None:
        """Publishes the event's standings from a thread of their own, not the request's.

        Each publication reads every game of the event and logs the whole table under the
        event's row lock: done in each request that ended a game, 500 players' game ends queued
        on that lock (resign p50 ~1 s) and, holding their threads, stalled everyone's moves
        (bench/compete.py, moves p99 2 s). Changes that come while a publication runs are
        folded into the next one, so at most one runs per process and event, at most one every
        ``standings_interval_s``, and the standings published always count every game ended
        before it began."""
        with self._mutex:
            self._changed.add(arena_id)
            if self._publishing:
                return
            self._publishing = True
        threading.Thread(target=self._publish_changed, name="standings", daemon=True).start()

    def _publish_changed(self) -> None:
        while True:
            with self._mutex:
                if not self._changed:
                    self._publishing = False
                    return
                changed = sorted(self._changed)
                self._changed.clear()
            for arena_id in changed:
                try:
                    self.publish_standings(arena_id)
                except Exception:  # the database went away: the next game's end publishes
                    log.exception("publishing the standings of event %s failed", arena_id)
            time.sleep(self.standings_interval_s)

    def publish_standings(self, arena_id: int) -> None:
        with self.sessions.begin() as db:
            # The event's row is locked while its standings are read and logged: two games
            # ending at once log in the order they read, the later one with both results.
            db.execute(select(Arena.id).where(Arena.id == arena_id).with_for_update()).first()
            data = standings_json(arena_id, standings_of(db, arena_id))
            event_id = db.execute(
                insert(Event)
                .values(
                    room_code=channel(arena_id),
                    kind=STANDINGS_KIND,
                    data=data,
                    created_at=self.clock(),
                )
                .returning(Event.id)
            ).scalar_one()
        self.publish([event_id])

    def last_event_id(self, arena_id: int) -> int:
        with self.sessions() as db:
            found = db.scalar(
                select(func.max(Event.id)).where(Event.room_code == channel(arena_id))
            )
        return int(found or 0)

    # -- internals -----------------------------------------------------------------------

    @staticmethod
    def _arena(db: Session, arena_id: int) -> Arena:
        arena = db.get(Arena, arena_id) if 0 < arena_id < 2**31 else None
        if arena is None:
            raise NotFound("There is no event with that id.")
        return arena

    def _view(self, db: Session, arena: Arena) -> ArenaView:
        players = db.scalar(
            select(func.count()).select_from(ArenaPlayer).where(ArenaPlayer.arena_id == arena.id)
        )
        starts, ends = as_utc(arena.starts_at), as_utc(arena.ends_at)
        assert starts is not None and ends is not None
        return ArenaView(
            arena.id, arena.game, starts, ends, status_at(arena, self.clock()), int(players or 0)
        )


def known_game(slug: str) -> bool:
    return slug in GAMES
