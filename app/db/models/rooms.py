"""Rooms, their members, races and the events of rooms and races."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, UTCDateTime


class Room(Base):
    """A room: a short code to share, its members, and the races they run on one deal each."""

    __tablename__ = "room"
    __table_args__ = (Index("ix_room_status_active", "status", "active_at"),)

    code: Mapped[str] = mapped_column(String(6), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    created_by: Mapped[str] = mapped_column(ForeignKey("player.id"))
    status: Mapped[str] = mapped_column(String(8))  # "open", "racing" or "closed"
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # A room the server formed from the race queue for one rated race (not a private room).
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The last join, leave, start or race end: an open room idle for long closes.
    active_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RoomMember(Base):
    __tablename__ = "room_member"
    __table_args__ = (Index("ix_room_member_player", "player_id"),)

    room_code: Mapped[str] = mapped_column(ForeignKey("room.code"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Race(Base):
    """One race of a room on one deal; its racers' games point at it (``game.race_id``)."""

    __tablename__ = "race"
    __table_args__ = (
        UniqueConstraint("room_code", "number"),
        # Whether a race on a deal is running: the seal (app/services/seal.py).
        Index("ix_race_deal", "game", "deal", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    room_code: Mapped[str] = mapped_column(ForeignKey("room.code"))
    number: Mapped[int] = mapped_column(Integer)  # 1, then 2 for the first rematch, …
    game: Mapped[str] = mapped_column(String(32))
    deal: Mapped[int] = mapped_column(BigInteger)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(10))  # "running" or "finished"
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Rated: formed by the server from the queue; its end changes the racers' race ratings.
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Event(Base):
    """What happened in a room, in order: rows first, notifications second. A client that
    reconnects with ``Last-Event-ID`` reads what it missed from here."""

    __tablename__ = "event"
    __table_args__ = (Index("ix_event_room_id", "room_code", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # A room's code, or "@<id>" for an event (arena): its live standings (no foreign key).
    room_code: Mapped[str] = mapped_column(String(6))
    kind: Mapped[str] = mapped_column(String(8))  # "room", "race", "progress" or "standing"
    data: Mapped[str] = mapped_column(Text)  # JSON
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
