"""The rated race queue (contract v3, Competition): strangers paired by the server.

A player queues for a game; the server forms a race of 2 to 8 queued players once the
longest-waiting one has waited ``wait_s`` (or 8 are waiting), taking them in the order they
queued and skipping anyone who must not race someone already taken:

- the same address (as the app resolves it: app/web/http/ratelimit.py ``client_address``);
- the same browser session (a random id kept in the session cookie; an API token is a session
  of its own);
- in the same private room in the last day: members of one private room now, or racers of one
  private room's race that started in the last day.

Forming happens when a player queues, when a queued player asks how the queue stands (the
clients poll), and on a short interval in every process (``form_due``, run by the app's
background former, app/main.py), so races form when nobody polls. Each attempt is one
transaction that locks the unmatched queue rows it reads (PostgreSQL: ``FOR UPDATE SKIP
LOCKED``, so a second former neither waits nor sees them; SQLite: every write transaction
begins IMMEDIATE, which serializes formers) and takes them only if still unmatched, so two
workers or instances cannot put one player into two races. The race is a room of the server's
(``room.rated``), started at once with the usual countdown (app/services/rooms/rooms.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CursorResult, and_, delete, func, insert, select, update
from sqlalchemy.orm import Session, aliased, sessionmaker

from app.db.models import Game, QueuedRacer, Race, Room, RoomMember, as_utc
from app.engine import UnknownGame, get_ruleset
from app.services.errors import InvalidRequest
from app.services.players import now
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import RoomView

MIN_RACERS = 2
MAX_RACERS = 8
ROOM_MEMORY = timedelta(days=1)


@dataclass(frozen=True)
class QueueState:
    queued: bool
    game: str | None
    joined_at: datetime | None
    waiting: int  # players waiting for this game now (the caller included)
    room: RoomView | None  # the race formed for the caller, once formed


@dataclass
class RaceQueue:
    sessions: sessionmaker[Session]
    rooms: Rooms
    wait_s: float = 10.0
    clock: Callable[[], datetime] = now

    def join(self, player_id: str, slug: str, address: str, session_key: str) -> QueueState:
        try:
            get_ruleset(slug)
        except UnknownGame as exc:
            raise InvalidRequest.of(exc.words) from None
        stamp = self.clock()
        with self.sessions.begin() as db:
            db.execute(delete(QueuedRacer).where(QueuedRacer.player_id == player_id))
            db.execute(
                insert(QueuedRacer).values(
                    player_id=player_id,
                    game=slug,
                    address=address[:64],
                    session_key=session_key[:64],
                    joined_at=stamp,
                    room_code=None,
                )
            )
        self.form(slug)
        return self.state(player_id, form=False)

    def leave(self, player_id: str) -> None:
        with self.sessions.begin() as db:
            db.execute(delete(QueuedRacer).where(QueuedRacer.player_id == player_id))

    def state(self, player_id: str, *, form: bool = True) -> QueueState:
        with self.sessions() as db:
            row = db.get(QueuedRacer, player_id)
            slug = None if row is None else row.game
        if form and row is not None and row.room_code is None and slug is not None:
            self.form(slug)
        with self.sessions() as db:
            row = db.get(QueuedRacer, player_id)
            if row is None:
                return QueueState(False, None, None, 0, None)
            waiting = db.scalar(
                select(func.count()).where(
                    QueuedRacer.game == row.game, QueuedRacer.room_code.is_(None)
                )
            )
            code, game, joined = row.room_code, row.game, row.joined_at
        room = None if code is None else self.rooms.get(code)
        return QueueState(code is None, game, joined, int(waiting or 0), room)

    # -- forming races -----------------------------------------------------------------

    def form_due(self) -> list[str]:
        """Forms every race that is due, in every game someone waits for; the new rooms'
        codes. Safe to run in any number of processes at once (see ``form``)."""
        with self.sessions() as db:
            slugs = db.scalars(
                select(QueuedRacer.game)
                .where(QueuedRacer.room_code.is_(None))
                .distinct()
                .order_by(QueuedRacer.game)
            ).all()
        codes: list[str] = []
        for slug in slugs:
            # Each race takes at least two unmatched rows, so this ends.
            while (code := self.form(slug)) is not None:
                codes.append(code)
        return codes

    def form(self, slug: str) -> str | None:
        """Forms one race of ``slug`` from the queue if it is time; its room's code."""
        stamp = self.clock()
        with self.sessions.begin() as db:
            waiting = (
                db.execute(
                    select(QueuedRacer)
                    .where(QueuedRacer.game == slug, QueuedRacer.room_code.is_(None))
                    .order_by(QueuedRacer.joined_at, QueuedRacer.player_id)
                    .limit(64)
                    # Rows another former holds are in a race being formed, or about to be
                    # judged not due: skipping them beats waiting for that transaction.
                    .with_for_update(skip_locked=True)
                )
                .scalars()
                .all()
            )
            if len(waiting) < MIN_RACERS:
                return None
            oldest = as_utc(waiting[0].joined_at)
            assert oldest is not None
            if len(waiting) < MAX_RACERS and stamp - oldest < timedelta(seconds=self.wait_s):
                return None
            apart = self.kept_apart(db, [q.player_id for q in waiting], stamp)
            group = first_group(waiting, apart)
            if group is None:
                return None
            ids = [q.player_id for q in group]
            code, events = self.rooms.form_rated(db, slug, ids, stamp)
            taken: CursorResult[Any] = db.execute(  # type: ignore[assignment]
                update(QueuedRacer)
                .where(QueuedRacer.player_id.in_(ids), QueuedRacer.room_code.is_(None))
                .values(room_code=code)
            )
            if taken.rowcount != len(ids):  # another worker took one of them meanwhile
                db.rollback()
                return None
        self.rooms.publish(events)
        return code

    @staticmethod
    def kept_apart(db: Session, ids: list[str], stamp: datetime) -> set[frozenset[str]]:
        """Pairs of ``ids`` who were in the same private room in the last day."""
        cutoff = stamp - ROOM_MEMORY
        pairs: set[frozenset[str]] = set()
        a, b = aliased(RoomMember), aliased(RoomMember)
        for x, y in db.execute(
            select(a.player_id, b.player_id)
            .join(b, and_(a.room_code == b.room_code, a.player_id < b.player_id))
            .join(Room, Room.code == a.room_code)
            .where(a.player_id.in_(ids), b.player_id.in_(ids), Room.rated.is_(False))
        ):
            pairs.add(frozenset((x, y)))
        g1, g2 = aliased(Game), aliased(Game)
        for x, y in db.execute(
            select(g1.player_id, g2.player_id)
            .join(g2, and_(g1.race_id == g2.race_id, g1.player_id < g2.player_id))
            .join(Race, Race.id == g1.race_id)
            .where(
                g1.player_id.in_(ids),
                g2.player_id.in_(ids),
                Race.rated.is_(False),
                Race.starts_at > cutoff,
            )
        ):
            pairs.add(frozenset((x, y)))
        return pairs


def compatible(a: QueuedRacer, b: QueuedRacer, apart: set[frozenset[str]]) -> bool:
    """Whether two queued players may race each other."""
    return (
        a.address != b.address
        and a.session_key != b.session_key
        and frozenset((a.player_id, b.player_id)) not in apart
    )


def first_group(
    waiting: Sequence[QueuedRacer], apart: set[frozenset[str]]
) -> list[QueuedRacer] | None:
    """The race to form: led by the longest-waiting player who may race anyone waiting, then
    everyone in queue order who may race all those already in it, up to MAX_RACERS. A player
    who may race nobody here (one's address and another's browser) does not hold the others
    up: they race, and that player stays queued for the next strangers."""
    for at, head in enumerate(waiting):
        group = [head]
        for q in waiting[at + 1 :]:
            if all(compatible(q, g, apart) for g in group):
                group.append(q)
                if len(group) == MAX_RACERS:
                    break
        if len(group) >= MIN_RACERS:
            return group
    return None
