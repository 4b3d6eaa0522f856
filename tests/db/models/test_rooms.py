"""Rooms, members, races and events (app/db/models/rooms.py): what the tables refuse, and the
event log's order."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.db.models import Event, Race, Room, RoomMember
from tests.db.models.conftest import AT, refused


def _room(session: Session, code: str = "ROOMAA") -> None:
    session.execute(
        insert(Room).values(
            code=code, game="corners", created_by="p1", status="open", created_at=AT, active_at=AT
        )
    )


def _race(number: int, room: str = "ROOMAA") -> Race:
    return Race(
        room_code=room, number=number, game="corners", deal=9, starts_at=AT, status="running"
    )


def test_a_room_is_private_until_said_otherwise(session: Session) -> None:
    _room(session)
    assert session.get_one(Room, "ROOMAA").rated is False


def test_a_member_joins_a_room_once(session: Session) -> None:
    _room(session)
    session.add(RoomMember(room_code="ROOMAA", player_id="p1", joined_at=AT))
    session.flush()
    member = {"room_code": "ROOMAA", "player_id": "p1", "joined_at": AT}
    assert "UNIQUE" in refused(session, RoomMember, **member)


def test_a_member_joins_a_room_that_exists(session: Session) -> None:
    member = {"room_code": "NOROOM", "player_id": "p1", "joined_at": AT}
    assert "FOREIGN KEY" in refused(session, RoomMember, **member)


def test_a_rooms_races_are_numbered_once_each(session: Session) -> None:
    _room(session)
    _room(session, "ROOMBB")
    session.add_all([_race(1), _race(2), _race(1, "ROOMBB")])
    session.flush()
    first = session.scalar(select(Race).where(Race.room_code == "ROOMAA", Race.number == 1))
    assert first is not None and first.rated is False and first.finished_at is None
    again = {"room_code": "ROOMAA", "number": 2, "game": "corners", "deal": 3, "starts_at": AT,
             "status": "running"}  # fmt: skip
    assert "race.number" in refused(session, Race, **again)


def test_events_are_numbered_in_the_order_they_are_written(session: Session) -> None:
    # Any room code, or "@<id>" for an event (arena): no foreign key.
    for room, kind in [("ROOMAA", "room"), ("@12", "standing"), ("ROOMAA", "race")]:
        session.add(Event(room_code=room, kind=kind, data="{}", created_at=AT))
        session.flush()
    rows = session.execute(select(Event.id, Event.room_code).order_by(Event.id)).all()
    ids = [row.id for row in rows]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert [row.room_code for row in rows] == ["ROOMAA", "@12", "ROOMAA"]
