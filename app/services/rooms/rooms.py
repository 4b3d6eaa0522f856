"""Rooms and races (contract v2, "Rooms and races"): live play over the ordinary game
transactions.

A room has a short code to share, members, and races. Starting a race draws one deal and deals
one casual game of it to every member; the games carry the race (``game.race_id``) and the end
of the countdown (``game.not_before``, checked by the move path's locked read). A race's games
are ordinary games: the same moves, undo and resign, and the same-deal rule keeps racers from
reading each other's boards while they race. Every change writes an event row in its own
transaction (app/services/rooms/events.py) and hands the ids to the broker after the commit.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from app.db.game_rows import GAME, GameRow
from app.db.models import Game, Player, Race, Room, RoomMember
from app.engine import RULES_VERSION, Status, UnknownGame, dumps, get_ruleset
from app.services.errors import (
    InvalidRequest,
    NotAMember,
    NotFound,
    RaceRunning,
    RoomClosed,
    RoomFull,
    ServiceError,
    TooManyRooms,
)
from app.services.games import initial_status
from app.services.players import new_id
from app.services.rooms import events as race_events
from app.services.rooms.reads import RoomReads
from app.services.rooms.views import (
    CLOSED,
    OPEN,
    RACING,
    RoomView,
    new_code,
    normalize_code,
)
from app.services.statuses import RaceStatus


class Rooms(RoomReads):
    """Rooms and their races: create, join, leave, start, form a rated race, sweep."""

    # -- the use cases ------------------------------------------------------------------

    def create(self, player_id: str, slug: str) -> RoomView:
        try:
            get_ruleset(slug)
        except UnknownGame as exc:
            raise InvalidRequest.of(exc.words) from None
        stamp = self.clock()
        with self.sessions.begin() as db:
            self._check_room_cap(db, player_id)
            code = self._unused_code(db)
            db.execute(
                insert(Room).values(
                    code=code,
                    game=slug,
                    created_by=player_id,
                    status=OPEN,
                    created_at=stamp,
                    active_at=stamp,
                )
            )
            db.execute(
                insert(RoomMember).values(room_code=code, player_id=player_id, joined_at=stamp)
            )
            ids = [self._room_event(db, code, "created", player_id, stamp)]
            view = self._view(db, code)
        self.publish(ids)
        return view

    def get(self, code: str) -> RoomView:
        with self.sessions() as db:
            return self._view(db, self._code(db, code))

    def room_of_race(self, race_id: int) -> RoomView:
        with self.sessions() as db:
            return self._view(db, race_events.room_of(db, race_id))

    def join(self, code: str, player_id: str) -> RoomView:
        stamp = self.clock()
        with self.sessions.begin() as db:
            code = self._code(db, code)
            room = self._lock_room(db, code)
            if room.status == CLOSED:
                raise RoomClosed("This room has closed: create a new one.")
            if self._is_member(db, code, player_id):
                return self._view(db, code)
            if room.rated:
                raise RoomClosed("A rated race's racers were paired by the server: watch it.")
            self._check_room_cap(db, player_id)
            members = db.scalar(
                select(func.count()).select_from(RoomMember).where(RoomMember.room_code == code)
            )
            if (members or 0) >= self.limits.max_members:
                raise RoomFull("This room is full (%(max)s players).", max=self.limits.max_members)
            db.execute(
                insert(RoomMember).values(room_code=code, player_id=player_id, joined_at=stamp)
            )
            db.execute(update(Room).where(Room.code == code).values(active_at=stamp))
            ids = [self._room_event(db, code, "joined", player_id, stamp)]
            view = self._view(db, code)
        self.publish(ids)
        return view

    def leave(self, code: str, player_id: str) -> RoomView:
        """Leaves the room; a racer still playing forfeits (resigns) the race game first."""
        with self.sessions() as db:
            code = self._code(db, code)
            if not self._is_member(db, code, player_id):
                raise NotAMember("You are not in this room.")
            playing = self._playing_race_game(db, code, player_id)
        if playing is not None:
            self.games.resign(playing, player_id)
        stamp = self.clock()
        with self.sessions.begin() as db:
            self._lock_room(db, code)
            if not self._is_member(db, code, player_id):  # the other of two leaves did it
                raise NotAMember("You are not in this room.")
            db.execute(
                delete(RoomMember).where(
                    RoomMember.room_code == code, RoomMember.player_id == player_id
                )
            )
            ids = [self._room_event(db, code, "left", player_id, stamp)]
            left = db.scalar(
                select(func.count()).select_from(RoomMember).where(RoomMember.room_code == code)
            )
            values: dict[str, Any] = {"active_at": stamp}
            if not left:
                values["status"] = CLOSED
            db.execute(update(Room).where(Room.code == code).values(**values))
            if not left:
                ids.append(self._room_event(db, code, "closed", None, stamp))
            view = self._view(db, code)
        self.publish(ids)
        return view

    def start(self, code: str, player_id: str) -> RoomView:
        """A race: one drawn deal, one casual game of it per member, moves refused until the
        countdown ends. Starting again after a race has ended is a rematch (a new deal)."""
        stamp = self.clock()
        starts_at = stamp + timedelta(seconds=self.limits.countdown_s)
        with self.sessions.begin() as db:
            code = self._code(db, code)
            room = self._lock_room(db, code)
            if room.status == CLOSED:
                raise RoomClosed("This room has closed: create a new one.")
            if not self._is_member(db, code, player_id):
                raise NotAMember("Only the room's players can start a race: join it first.")
            if room.status == RACING:
                raise RaceRunning("A race is already running in this room.")
            if room.rated:
                raise RoomClosed("A rated race's room holds one race: queue again for another.")
            view, ids = self._race(db, code, room.game, stamp, starts_at, rated=False)
        self.publish(ids)
        return view

    def form_rated(
        self, db: Session, slug: str, player_ids: list[str], stamp: datetime
    ) -> tuple[str, list[int]]:
        """A room of the server's for one rated race of ``player_ids`` (from the race queue,
        app/services/race_queue.py), started at once with the usual countdown; inside the
        caller's transaction. Returns the room's code and its events' ids, which the caller
        publishes after the commit."""
        code = self._unused_code(db)
        db.execute(
            insert(Room).values(
                code=code,
                game=slug,
                created_by=player_ids[0],
                status=OPEN,
                created_at=stamp,
                active_at=stamp,
                rated=True,
            )
        )
        for pid in player_ids:
            db.execute(insert(RoomMember).values(room_code=code, player_id=pid, joined_at=stamp))
        starts_at = stamp + timedelta(seconds=self.limits.countdown_s)
        _, ids = self._race(db, code, slug, stamp, starts_at, rated=True)
        return code, ids

    def _race(
        self,
        db: Session,
        code: str,
        slug: str,
        stamp: datetime,
        starts_at: datetime,
        *,
        rated: bool,
    ) -> tuple[RoomView, list[int]]:
        rules = get_ruleset(slug)
        number = self.games.draw_deal()  # drawn like a rated deal: sealed until the race ends
        previous = db.scalar(select(func.max(Race.number)).where(Race.room_code == code))
        race_id = db.execute(
            insert(Race)
            .values(
                room_code=code,
                number=(previous or 0) + 1,
                game=slug,
                deal=number,
                starts_at=starts_at,
                status=RaceStatus.RUNNING,
                finished_at=None,
                rated=rated,
            )
            .returning(Race.id)
        ).scalar_one()
        state = rules.deal(number, self.games.deal_key)
        status = initial_status(rules, state)
        for member in self._member_ids(db, code):
            row = GameRow.dealt(
                new_id(),
                member,
                slug,
                number,
                dumps(state),
                status,
                stamp,
                rules=RULES_VERSION,
                # Casual for win rates (a race is not a rated game); a rated race changes the
                # race ratings instead (app/services/ratings.py).
                rated=False,
                race_id=race_id,
                not_before=starts_at,
            )
            db.execute(insert(GAME).values(**vars(row)))
        db.execute(update(Room).where(Room.code == code).values(status=RACING, active_at=stamp))
        view = self._view(db, code)
        assert view.race is not None
        started = {"type": "started", "race": view.race.event_data()}
        ids = [race_events.record(db, code, "race", started, stamp)]
        return view, ids

    def sweep(self) -> None:
        """Forfeits racers silent for longer than the limit and closes idle open rooms."""
        stamp = self.clock()
        cutoff = stamp - timedelta(seconds=self.limits.forfeit_s)
        with self.sessions() as db:
            silent = db.execute(
                select(Game.id, Game.player_id)
                .join(Race, Race.id == Game.race_id)
                .where(
                    Race.status == RaceStatus.RUNNING,
                    Game.status == Status.PLAYING,
                    Game.updated_at < cutoff,
                    Game.not_before < cutoff,
                )
            ).all()
        for game_id, owner in silent:
            try:
                self.games.resign(game_id, owner)
            except ServiceError:  # it ended meanwhile: nothing to forfeit
                continue
        idle = stamp - timedelta(seconds=self.limits.idle_s)
        ids: list[int] = []
        with self.sessions.begin() as db:
            codes = db.scalars(
                select(Room.code).where(Room.status == OPEN, Room.active_at < idle)
            ).all()
            for code in codes:
                closed = db.execute(
                    update(Room)
                    .where(Room.code == code, Room.status == OPEN, Room.active_at < idle)
                    .values(status=CLOSED)
                    .returning(Room.code)
                ).first()
                if closed is not None:  # not closed meanwhile by another worker's sweep
                    ids.append(self._room_event(db, code, "closed", None, stamp))
        self.publish(ids)
        self.prune_events(stamp - timedelta(seconds=self.limits.event_retention_s))

    # -- internals ----------------------------------------------------------------------

    def _code(self, db: Session, code: str) -> str:
        canonical = normalize_code(code)
        if canonical is None or db.get(Room, canonical) is None:
            raise NotFound("There is no room with that code.")
        return canonical

    @staticmethod
    def _lock_room(db: Session, code: str) -> Room:
        query = select(Room).where(Room.code == code).with_for_update()
        return db.scalars(query.execution_options(populate_existing=True)).one()

    @staticmethod
    def _unused_code(db: Session) -> str:
        for _ in range(20):
            code = new_code()
            if db.get(Room, code) is None:
                return code
        raise RuntimeError("no free room code after 20 tries")  # 27^6: cannot happen

    def _check_room_cap(self, db: Session, player_id: str) -> None:
        count = db.scalar(
            select(func.count())
            .select_from(RoomMember)
            .join(Room, Room.code == RoomMember.room_code)
            .where(RoomMember.player_id == player_id, Room.status != CLOSED)
        )
        if (count or 0) >= self.limits.rooms_per_player:
            raise TooManyRooms(
                "You are in %(count)s rooms already: leave one first.",
                count=self.limits.rooms_per_player,
            )

    @staticmethod
    def _is_member(db: Session, code: str, player_id: str) -> bool:
        return db.get(RoomMember, (code, player_id)) is not None

    @staticmethod
    def _member_ids(db: Session, code: str) -> list[str]:
        return list(
            db.scalars(
                select(RoomMember.player_id)
                .where(RoomMember.room_code == code)
                .order_by(RoomMember.joined_at, RoomMember.player_id)
            ).all()
        )

    @staticmethod
    def _playing_race_game(db: Session, code: str, player_id: str) -> str | None:
        return db.scalar(
            select(Game.id)
            .join(Race, Race.id == Game.race_id)
            .where(
                Race.room_code == code,
                Race.status == RaceStatus.RUNNING,
                Game.player_id == player_id,
                Game.status == Status.PLAYING,
            )
        )

    def _room_event(
        self, db: Session, code: str, kind: str, player_id: str | None, stamp: datetime
    ) -> int:
        name = None
        if player_id is not None:
            name = db.scalar(select(Player.name).where(Player.id == player_id))
        players = [p["name"] for p in self._players(db, code)]
        data = {"type": kind, "player": name, "players": players}
        return race_events.record(db, code, "room", data, stamp)

    @staticmethod
    def _players(db: Session, code: str) -> list[dict[str, str]]:
        rows = db.execute(
            select(Player.id, Player.name)
            .join(RoomMember, RoomMember.player_id == Player.id)
            .where(RoomMember.room_code == code)
            .order_by(RoomMember.joined_at, Player.id)
        ).all()
        return [{"id": pid, "name": name} for pid, name in rows]

    def _view(self, db: Session, code: str) -> RoomView:
        room = db.get(Room, code, populate_existing=True)
        assert room is not None
        race = db.scalars(
            select(Race)
            .where(Race.room_code == code)
            .order_by(Race.number.desc())
            .limit(1)
            .execution_options(populate_existing=True)
        ).first()
        race_data = None
        if race is not None:
            race_data = race_events.race_view(race, race_events.racers(db, race.id))
        return RoomView(
            code,
            room.game,
            room.status,
            room.created_by,
            self._players(db, code),
            race_data,
            None if race is None else race.id,
        )
