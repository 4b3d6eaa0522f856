"""The statistics counters: per player, per day, per deal."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, UTCDateTime

ALL_GAMES = "all"  # the ``game`` of the statistics rows that add up every game


class PlayerStats(Base):
    """A player's running record for one game (or ``all``), kept current as games are played.

    Kept as counters so that leaderboards and player pages read a handful of rows instead of
    counting games. ``wilson`` is the lower bound of the 95% Wilson interval of won / played.
    """

    __tablename__ = "player_stats"
    __table_args__ = (Index("ix_player_stats_rank", "game", "wilson", "won"),)

    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    played: Mapped[int] = mapped_column(Integer, default=0)
    won: Mapped[int] = mapped_column(Integer, default=0)
    wilson: Mapped[float] = mapped_column(Float, default=0.0)
    best_ms: Mapped[int | None] = mapped_column(BigInteger)
    fewest_moves: Mapped[int | None] = mapped_column(Integer)
    current_streak: Mapped[int] = mapped_column(Integer, default=0)
    longest_streak: Mapped[int] = mapped_column(Integer, default=0)
    last_played_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class DailyStats(Base):
    """Games played and won per player, game and UTC day of the first move: recent-period
    leaderboards add these up."""

    __tablename__ = "daily_stats"
    __table_args__ = (
        # On PostgreSQL the index carries the counters, so a period's rows (tens of thousands
        # at scale) are added up from the index alone.
        Index(
            "ix_daily_stats_game_day",
            "game",
            "day",
            postgresql_include=["player_id", "played", "won"],
        ),
    )

    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    played: Mapped[int] = mapped_column(Integer, default=0)
    won: Mapped[int] = mapped_column(Integer, default=0)


class DealStats(Base):
    """How everyone has fared on one deal, kept current as games are played (like
    ``PlayerStats``), so that a deal page reads one row however often the deal was played.

    The fewest moves and the fastest time among wins belong to the first game that achieved
    them: a later game must do strictly better to take the record.
    """

    __tablename__ = "deal_stats"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    deal: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    played: Mapped[int] = mapped_column(Integer, default=0)
    won: Mapped[int] = mapped_column(Integer, default=0)
    fewest_moves: Mapped[int | None] = mapped_column(Integer)
    fewest_game_id: Mapped[str | None] = mapped_column(ForeignKey("game.id"))
    fastest_ms: Mapped[int | None] = mapped_column(BigInteger)
    fastest_game_id: Mapped[str | None] = mapped_column(ForeignKey("game.id"))


class GameDailyStats(Base):
    """Games played and won per game and UTC day of the first move, across all players: each
    game's overall win rate, for all time or a recent period, from a few hundred rows."""

    __tablename__ = "game_daily_stats"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    played: Mapped[int] = mapped_column(Integer, default=0)
    won: Mapped[int] = mapped_column(Integer, default=0)
