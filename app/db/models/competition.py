"""The competition: deals of one's own, daily challenges, the race queue, race ratings, and
events (arenas)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, UTCDateTime


class CompetitionDeal(Base):
    """A certified deal dealt to one player in a competition (app/services/pool.py): it is
    never dealt to anyone else in a competition, and it is sealed until ``sealed_until``."""

    __tablename__ = "competition_deal"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    deal: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    kind: Mapped[str] = mapped_column(String(10))  # "challenge" or "event"
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"))
    sealed_until: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Challenge(Base):
    """A player's daily challenge game of one game and UTC day (one at most: the key)."""

    __tablename__ = "challenge"
    __table_args__ = (Index("ix_challenge_player", "player_id", "game", "day"),)

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), unique=True)
    par: Mapped[int] = mapped_column(Integer)


class QueuedRacer(Base):
    """A player waiting in the rated race queue of one game (app/services/race_queue.py),
    with what the pairing rules compare: the address and the browser session they queued
    from. Removed when a race is formed for them or they leave."""

    __tablename__ = "race_queue"
    __table_args__ = (Index("ix_race_queue_game", "game", "joined_at"),)

    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    address: Mapped[str] = mapped_column(String(64))
    session_key: Mapped[str] = mapped_column(String(64))
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # The room of the race formed for the player, until they leave the queue's answer.
    room_code: Mapped[str | None] = mapped_column(String(6))


class RaceRating(Base):
    """A player's race rating of one game (Plackett-Luce, openskill): shown as mu - 3 sigma."""

    __tablename__ = "race_rating"
    __table_args__ = (Index("ix_race_rating_board", "game", "rating"),)

    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    rating: Mapped[float] = mapped_column(Float)
    races: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RatingChange(Base):
    """One racer's rating change by one rated race: every change is traceable to its race."""

    __tablename__ = "rating_change"
    __table_args__ = (Index("ix_rating_change_player", "player_id", "game", "race_id"),)

    race_id: Mapped[int] = mapped_column(ForeignKey("race.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    place: Mapped[int] = mapped_column(Integer)  # 1 = best; forfeits share the last place
    forfeit: Mapped[bool] = mapped_column(Boolean)
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu_after: Mapped[float] = mapped_column(Float)
    sigma_after: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Arena(Base):
    """An event (arena, contract v3): a game, a start and an end; operators create them
    (``python -m app.cli event create``). "Event" is taken by the room event log."""

    __tablename__ = "arena"
    __table_args__ = (Index("ix_arena_ends", "ends_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game: Mapped[str] = mapped_column(String(32))
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ArenaPlayer(Base):
    __tablename__ = "arena_player"

    arena_id: Mapped[int] = mapped_column(ForeignKey("arena.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ArenaGame(Base):
    """A game of an event: the player's ``seq``-th deal of their own in it."""

    __tablename__ = "arena_game"
    __table_args__ = (
        UniqueConstraint("arena_id", "player_id", "seq"),
        Index("ix_arena_game_arena", "arena_id", "player_id"),
    )

    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), primary_key=True)
    arena_id: Mapped[int] = mapped_column(ForeignKey("arena.id"))
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"))
    seq: Mapped[int] = mapped_column(Integer)
