"""Players, games and each game's move log (its audit trail)."""

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


class Player(Base):
    __tablename__ = "player"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(24))
    # Names are unique whatever their case: the lower-cased copy carries the constraint.
    name_key: Mapped[str] = mapped_column(String(24), unique=True)
    password_hash: Mapped[str | None] = mapped_column(Text)
    # SHA-256 of the API bearer token; the token itself is shown once and never stored.
    token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Browser sessions carry this number; signing out or changing the password bumps it, which
    # revokes every session signed in before.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Display and play preferences (the ``ph_prefs`` cookie's flags), following the account to
    # every device it signs in on; None until the player first saves them.
    prefs: Mapped[str | None] = mapped_column(String(200))
    # An operator's ban (``python -m app.cli player ban``): the player's games stop counting on
    # leaderboards and they cannot start rated games. Deleted: the account was deleted and its
    # name is a ghost name (``deleted-<8 hex>``); its games stay as anonymous records.
    banned_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Game(Base):
    __tablename__ = "game"
    __table_args__ = (
        # A deal's finished games, latest first (the deal page); the columns change only when
        # a game starts and ends, so moves still update the row in place.
        Index("ix_game_deal_finished", "game", "deal", "finished_at"),
        Index("ix_game_player_status", "player_id", "status"),
        # A player's games in the order they were first played (recent games, streaks).
        Index("ix_game_player_first_move", "player_id", "first_move_at"),
        # A player's games of one deal: the same-deal rule on every read of another game, and
        # "first game of the deal" for deal records and the deal of the day.
        Index("ix_game_player_deal", "player_id", "game", "deal"),
        # A race's games: its standings, and the spectator view's mask (app/services/seal.py).
        Index("ix_game_race", "race_id"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("player.id"))
    game: Mapped[str] = mapped_column(String(32))
    deal: Mapped[int] = mapped_column(BigInteger)
    rules: Mapped[str] = mapped_column(String(8))
    # Rated: the server drew the deal, so nobody could have scouted it; only rated games count
    # toward win rates, leaderboards and streaks (contract v2).
    rated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    state: Mapped[str] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(10))
    moves: Mapped[int] = mapped_column(Integer, default=0)
    undos: Mapped[int] = mapped_column(Integer, default=0)
    # Whether the last move still in force may be taken back (it revealed no hidden card).
    can_undo: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    first_move_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Active time from the first move: the pauses between actions, each counted up to the idle
    # cap (a setting), so a closed tab or a break does not count. Kept current on every action.
    active_ms: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # The active time when the game ended (what records compare), set when it ends.
    duration_ms: Mapped[int | None] = mapped_column(BigInteger)
    # A race's game (app/services/rooms/rooms.py): its race, and the moment before which moves are
    # refused (the countdown). The move path's locked read returns both, so the check is free.
    # A plain integer (no foreign key): SQLite could not drop the column again (0009).
    race_id: Mapped[int | None] = mapped_column(Integer)
    not_before: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # A game of a competition on a deal of the player's own (contract v3, Competition):
    # "challenge" (the daily challenge) or "event"; None for every other game.
    competition: Mapped[str | None] = mapped_column(String(10))


class MoveRecord(Base):
    """One accepted action: a move, an undo or a resignation, in order."""

    __tablename__ = "move"
    __table_args__ = (UniqueConstraint("game_id", "idempotency_key"),)

    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    action: Mapped[str] = mapped_column(String(8))  # "move", "undo" or "resign"
    notation: Mapped[str | None] = mapped_column(String(24))
    revealed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    idempotency_key: Mapped[str | None] = mapped_column(String(100))
    # The first answer to a move sent with an Idempotency-Key, given again to every retry.
    response: Mapped[str | None] = mapped_column(Text)
    # The game's serialized state after this move, on every SNAPSHOT_EVERY-th move still in
    # force (app/services/move_log.py): replays and undos start from the nearest one.
    snapshot: Mapped[str | None] = mapped_column(Text)
