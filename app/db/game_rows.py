"""The ``game`` row and its move log in SQL: the row as the services hold it, the statements
the move path runs, and their parameters. The transaction that runs them is
app/db/move_store.py.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, select, update

from app.db.models import Event, Game, MoveRecord, Player


@dataclass
class GameRow:
    """One ``game`` row as plain data: the move path reads and writes it with SQLAlchemy Core,
    which costs a fraction of the ORM's unit of work on every move."""

    id: str
    player_id: str
    game: str
    deal: int
    rules: str
    rated: bool
    state: str
    version: int
    status: str
    moves: int
    undos: int
    can_undo: bool
    created_at: datetime
    updated_at: datetime
    first_move_at: datetime | None
    finished_at: datetime | None
    duration_ms: int | None
    active_ms: int = 0
    race_id: int | None = None  # a race's game (app/services/rooms/rooms.py)
    not_before: datetime | None = None  # moves before this moment: 409 race_not_started
    competition: str | None = None  # "challenge" or "event": a deal of the player's own

    @classmethod
    def dealt(
        cls,
        game_id: str,
        player_id: str,
        slug: str,
        deal: int,
        state: str,
        status: str,
        stamp: datetime,
        *,
        rules: str,
        rated: bool,
        race_id: int | None = None,
        not_before: datetime | None = None,
        competition: str | None = None,
    ) -> GameRow:
        """A game just dealt, before its first move (``state`` serialized, ``rules`` the
        engine's rules version)."""
        return cls(
            id=game_id,
            player_id=player_id,
            game=slug,
            deal=deal,
            rules=rules,
            rated=rated,
            state=state,
            version=0,
            status=status,
            moves=0,
            undos=0,
            can_undo=False,
            created_at=stamp,
            updated_at=stamp,
            first_move_at=None,
            finished_at=None,
            duration_ms=None,
            race_id=race_id,
            not_before=not_before,
            competition=competition,
        )


GAME = cast(Table, Game.__table__)
MOVE = cast(Table, MoveRecord.__table__)
EVENT = cast(Table, Event.__table__)
_PLAYER = cast(Table, Player.__table__)
MUTABLE = (
    "rated", "state", "version", "status", "moves", "undos", "can_undo", "updated_at",
    "first_move_at", "finished_at", "duration_ms", "active_ms",
)  # fmt: skip
TIMES = ("created_at", "updated_at", "first_move_at", "finished_at", "not_before")

# Statements are built once: building and cache-keying one on every call costs more than
# sending it.
SELECT_GAME = (
    select(*(GAME.c[f.name] for f in fields(GameRow)), _PLAYER.c.name.label("player_name"))
    .join(_PLAYER, _PLAYER.c.id == GAME.c.player_id)
    .where(GAME.c.id == bindparam("game_id"))
)
LOCK_GAME = SELECT_GAME.with_for_update(of=GAME)
UPDATE_GAME = (
    update(GAME)
    .where(GAME.c.id == bindparam("game_id"))
    .values({name: bindparam(name) for name in MUTABLE})
)
INSERT_MOVE = insert(MOVE)
# A race's progress event, written with the move (its parameters are named apart from the
# move's, as the two share one parameter dict on PostgreSQL).
INSERT_EVENT = insert(EVENT).values(
    room_code=bindparam("event_room"),
    kind=bindparam("event_kind"),
    data=bindparam("event_data"),
    created_at=bindparam("event_at"),
)


@dataclass(frozen=True)
class NewEvent:
    """A room's event to insert with a move (:data:`INSERT_EVENT`): a race's progress."""

    room: str
    kind: str
    data: str  # JSON
    at: datetime

    def values(self) -> dict[str, Any]:
        """The parameters of :data:`INSERT_EVENT`."""
        return {"event_room": self.room, "event_kind": self.kind, "event_data": self.data,
                "event_at": self.at}  # fmt: skip


FIRST_RESPONSE = select(MOVE.c.response, MOVE.c.action, MOVE.c.notation, MOVE.c.seq).where(
    MOVE.c.game_id == bindparam("game_id"), MOVE.c.idempotency_key == bindparam("key")
)
MOVE_LOG = (
    select(MOVE.c.seq, MOVE.c.action, MOVE.c.notation, MOVE.c.revealed)
    .where(MOVE.c.game_id == bindparam("game_id"))
    .order_by(MOVE.c.seq)
)
SNAPSHOT = select(MOVE.c.snapshot).where(
    MOVE.c.game_id == bindparam("game_id"), MOVE.c.seq == bindparam("seq")
)
LOCKED_COLUMNS = [str(c.key) for c in LOCK_GAME.selected_columns]


@dataclass(frozen=True)
class FirstAnswer:
    """The log entry of an earlier request with the same Idempotency-Key, and its answer."""

    response: str | None
    action: str
    notation: str | None
    seq: int

    def same_request(self, action: str, notation: str | None, version: int | None) -> bool:
        """Whether a retry asks for the same thing (version None: the retry did not say)."""
        return (
            self.action == action
            and self.notation == notation
            and (version is None or version == self.seq - 1)
        )


@dataclass(frozen=True)
class LockedGame:
    row: GameRow
    player_name: str
    first: FirstAnswer | None  # an earlier request with the same key


def game_values(row: GameRow) -> dict[str, Any]:
    """The parameters of :data:`UPDATE_GAME` for this row."""
    return {"game_id": row.id, **{name: getattr(row, name) for name in MUTABLE}}


def move_values(row: GameRow, action: str, stamp: datetime, **extra: Any) -> dict[str, Any]:
    """The parameters of :data:`INSERT_MOVE`: the action that made ``row``'s version."""
    values = {
        "notation": None,
        "revealed": False,
        "idempotency_key": None,
        "response": None,
        "snapshot": None,
    }
    values.update(extra)
    return {"game_id": row.id, "seq": row.version, "action": action, "created_at": stamp, **values}


def locked_game(values: dict[str, Any], first: Any) -> LockedGame:
    name = values.pop("player_name")
    answer = None if first is None else FirstAnswer(first[0], first[1], first[2], int(first[3]))
    return LockedGame(GameRow(**values), name, answer)
