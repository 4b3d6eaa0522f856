"""Events of rooms and races, written as rows inside the transaction that caused them.

Events are rows first and notifications second: the row commits with the change it describes
(a move, a join, a race start), and only after the commit does the service hand its id to the
broker (app/db/broker.py), which tells every process. A client that reconnects reads what it
missed from the table. No event carries a card: a progress event is counts only.

The move path calls :func:`after_race_step` for a race's game (``game.race_id`` is set), in the
move's own transaction; when the game has just ended it also locks the race row, so that two
racers finishing at once cannot both miss that the race is over.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Table, insert, select, update
from sqlalchemy.orm import Session

from app.db.game_rows import GameRow, NewEvent
from app.db.models import Event, Game, Player, Race, Room
from app.engine import Status, get_ruleset, loads
from app.services import ratings
from app.services.seal import shown_race_deal
from app.services.statuses import RaceStatus

EVENT = cast(Table, Event.__table__)
ROOM_KINDS = ("room", "race", "progress")


def record(
    db: Session | Connection, room: str, kind: str, data: dict[str, Any], stamp: datetime
) -> int:
    """Writes one event row; its id (the SSE ``id:``) once the transaction commits."""
    assert kind in ROOM_KINDS
    statement = insert(EVENT).values(
        room_code=room, kind=kind, data=json.dumps(data, separators=(",", ":")), created_at=stamp
    )
    return int(db.execute(statement.returning(EVENT.c.id)).scalar_one())


def progress_data(
    player: str, game_id: str, moves: int, foundation_cards: int, status: str
) -> dict[str, Any]:
    return {
        "player": player,
        "game": game_id,
        "moves": moves,
        "foundation_cards": foundation_cards,
        "status": status,
    }


@dataclass(frozen=True)
class Standing:
    place: int
    player: str
    game: str
    status: str
    moves: int
    foundation_cards: int
    time_ms: int | None  # from the start of the race to the win


@dataclass(frozen=True)
class Racer:
    player: str
    game: str
    status: str
    moves: int
    foundation_cards: int
    finished_at: datetime | None


def rank(racers: list[Racer], starts_at: datetime) -> list[Standing]:
    """Winners by finishing time, then everyone else by cards on foundations (more first),
    then by moves (fewer first); the name breaks what is left of a tie, so the order is stable."""

    def key(r: Racer) -> tuple[Any, ...]:
        won = r.status == Status.WON
        finished = r.finished_at.timestamp() if won and r.finished_at else 0.0
        return (0 if won else 1, finished, -r.foundation_cards, r.moves, r.player)

    out = []
    for place, r in enumerate(sorted(racers, key=key), 1):
        time_ms = None
        if r.status == Status.WON and r.finished_at is not None:
            time_ms = max(0, int((r.finished_at - starts_at).total_seconds() * 1000))
        standing = Standing(place, r.player, r.game, r.status, r.moves, r.foundation_cards, time_ms)
        out.append(standing)
    return out


def racers(db: Session | Connection, race_id: int, current: GameRow | None = None) -> list[Racer]:
    """The racers of a race as they stand, with ``current`` (a row being written in this
    transaction) in place of its stored version."""
    rows = db.execute(
        select(
            Game.id, Game.status, Game.moves, Game.state, Game.game, Game.finished_at, Player.name
        )
        .join(Player, Player.id == Game.player_id)
        .where(Game.race_id == race_id)
    ).all()
    out = []
    for gid, status, moves, state, slug, finished_at, name in rows:
        if current is not None and gid == current.id:
            status, moves, state, finished_at = (
                current.status,
                current.moves,
                current.state,
                current.finished_at,
            )
        on = get_ruleset(slug).on_foundations(loads(state))
        out.append(Racer(name, gid, status, moves, on, finished_at))
    return out


@dataclass(frozen=True)
class RaceView:
    """A race as the pages, the API and the events show it: no cards, counts and places only."""

    number: int  # in its room
    game: str
    deal: int | None  # secret until the race ends (contract v3): a second account must not deal it
    starts_at: datetime
    status: RaceStatus
    finished_at: datetime | None
    games: dict[str, str]  # racer's name → their game's id, by name
    standings: list[Standing]
    rated: bool

    def event_data(self) -> dict[str, Any]:
        """The race as its events carry it (JSON), and the API answers it."""
        return {
            "number": self.number,
            "game": self.game,
            "deal": self.deal,
            "starts_at": self.starts_at.isoformat(),
            "status": str(self.status),
            "finished_at": None if self.finished_at is None else self.finished_at.isoformat(),
            "games": self.games,
            # asdict: the fields in their order, as events have always carried them.
            "standings": [asdict(s) for s in self.standings],
            "rated": self.rated,
        }


def race_view(race: Any, racers_now: list[Racer]) -> RaceView:
    """A race row (``Race``, or the row being written) with its racers as they stand."""
    return RaceView(
        number=race.number,
        game=race.game,
        deal=shown_race_deal(race.deal, race.status),
        starts_at=race.starts_at,
        status=RaceStatus(race.status),
        finished_at=race.finished_at,
        games={r.player: r.game for r in sorted(racers_now, key=lambda r: r.player)},
        standings=rank(racers_now, race.starts_at),
        rated=bool(race.rated),
    )


RACE = cast(Table, Race.__table__)
ROOM = cast(Table, Room.__table__)


# (database, race id) → the race's room (which never changes): no read for it on every move.
_ROOMS: dict[tuple[Any, int], str] = {}
_ROOMS_KEPT = 10_000


def room_of(db: Session | Connection, race_id: int) -> str:
    engine = db.get_bind() if isinstance(db, Session) else db.engine
    url = engine.engine.url if isinstance(engine, Connection) else engine.url
    key = (url, race_id)
    code = _ROOMS.get(key)
    if code is None:
        code = str(db.scalar(select(RACE.c.room_code).where(RACE.c.id == race_id)))
        if len(_ROOMS) >= _ROOMS_KEPT:
            _ROOMS.clear()
        _ROOMS[key] = code
    return code


def progress_event(
    db: Session | Connection,
    record: GameRow,
    player_name: str,
    foundation_cards: int,
    stamp: datetime,
) -> NewEvent:
    """The event of a racer's accepted move that did not end the game: the move's own write
    inserts it (one round trip on PostgreSQL)."""
    assert record.race_id is not None and record.status == Status.PLAYING
    data = progress_data(player_name, record.id, record.moves, foundation_cards, record.status)
    return NewEvent(
        room_of(db, record.race_id), "progress", json.dumps(data, separators=(",", ":")), stamp
    )


def after_race_step(
    db: Session | Connection,
    record: GameRow,
    player_name: str,
    foundation_cards: int,
    stamp: datetime,
) -> list[int]:
    """The events of an accepted move, undo or resignation of a race's game (``record`` holds
    the row as it is being written): its progress, and when the game has just ended, the
    standings — and the end of the race when it was the last game still playing. The race row
    is locked when the game ends, so two racers finishing at once cannot both miss that the
    race is over."""
    assert record.race_id is not None
    if record.status == Status.PLAYING:
        room = room_of(db, record.race_id)
        data = progress_data(player_name, record.id, record.moves, foundation_cards, record.status)
        return [_record(db, room, "progress", data, stamp)]
    race = db.execute(select(RACE).where(RACE.c.id == record.race_id).with_for_update()).one()
    ids = [
        _record(
            db,
            race.room_code,
            "progress",
            progress_data(player_name, record.id, record.moves, foundation_cards, record.status),
            stamp,
        )
    ]
    if race.status != RaceStatus.RUNNING:
        return ids
    now_racing = racers(db, race.id, record)
    if all(r.status != Status.PLAYING for r in now_racing):
        db.execute(
            update(RACE)
            .where(RACE.c.id == race.id)
            .values(status=RaceStatus.FINISHED, finished_at=stamp)
        )
        db.execute(
            update(ROOM)
            .where(ROOM.c.code == race.room_code, ROOM.c.status == "racing")
            .values(status="open", active_at=stamp)
        )
        race = db.execute(select(RACE).where(RACE.c.id == race.id)).one()
        kind = "finished"
        if race.rated:
            ratings.rate_race(db, race.id, race.game, stamp, [record])
    else:
        kind = "standings"
    data = {"type": kind, "race": race_view(race, now_racing).event_data()}
    ids.append(_record(db, race.room_code, "race", data, stamp))
    return ids


_record = record  # the name ``record`` is the game row inside after_race_step
