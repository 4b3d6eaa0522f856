"""Tables: players, games, each game's move log (its audit trail), and the statistics counters."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that reads back as an aware UTC datetime on every backend.

    SQLite keeps no offset (it hands back naive values, which are UTC here) and PostgreSQL
    answers in the session's time zone; either way the app sees the same instant in UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return as_utc(value)


def as_utc(value: Any) -> datetime | None:
    """A datetime read back from either database, as an aware UTC datetime."""
    if value is None:
        return None
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


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


class DealVerdict(Base):
    """What the solver found about one deal, every card known: ``winnable`` (with a shortened
    winning line, moves in text form separated by spaces), ``lost`` (proved) or ``unknown``
    (undecided within its budget). Rows with ``certified`` form the pool of winnable deals
    that ``POST /api/games {"winnable": true}`` draws from (``python -m app.cli certify``)."""

    __tablename__ = "deal_verdict"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    deal: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    outcome: Mapped[str] = mapped_column(String(10))
    solution: Mapped[str | None] = mapped_column(Text)
    positions: Mapped[int] = mapped_column(Integer, default=0)
    certified: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Par: the length of the shortest winning line the solver knows (winnable deals only).
    par: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (Index("ix_deal_verdict_pool", "game", "certified"),)


class GameHint(Base):
    """Hints a game's player asked for: a hinted game is casual from its first hint on."""

    __tablename__ = "game_hint"

    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), primary_key=True)
    hints: Mapped[int] = mapped_column(Integer, default=0)
    first_at: Mapped[datetime] = mapped_column(UTCDateTime())


class GameCoach(Base):
    """What the coach keeps with a game (issue #22): the winning line its last exact hint
    found (``line``: moves in text form separated by spaces, from the position stored in
    ``line_start``, a serialized state), continued while the player follows it, in any process
    and after a restart; and the analysis of the game once it has ended (``analysis``: JSON),
    stored when decided."""

    __tablename__ = "game_coach"

    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), primary_key=True)
    line_start: Mapped[str | None] = mapped_column(Text)
    line: Mapped[str | None] = mapped_column(Text)
    analysis: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


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


class AppMeta(Base):
    """Facts about the deployment, by name (app/db/deployment.py): the deal key's fingerprint."""

    __tablename__ = "app_meta"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


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
