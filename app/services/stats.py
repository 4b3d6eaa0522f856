"""Statistics (contract.md): what counts as played and won, and the counters behind them.

A game counts as played from its first accepted move, for ever; only a won game counts as won,
so abandoning a bad deal cannot help a record. The counters live in ``player_stats`` (per player
and game, plus an ``all`` row) and ``daily_stats`` (per UTC day of the first move, for recent
periods), updated in the same transaction as the move that changes them.

Streaks: a win adds one; a loss or a resignation ends the current streak, and so does starting
to play a game while another game of the same kind is still unfinished (otherwise leaving bad
deals unfinished would protect a streak).
"""

from __future__ import annotations

import math
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.db.models import ALL_GAMES, DailyStats, Game, PlayerStats
from app.engine import Status

Z_95 = 1.959963984540054


def wilson_lower_bound(won: int, played: int, z: float = Z_95) -> float:
    """Lower bound of the Wilson score interval for ``won`` successes in ``played`` trials."""
    if played <= 0:
        return 0.0
    p = won / played
    z2 = z * z
    centre = p + z2 / (2 * played)
    margin = z * math.sqrt(p * (1 - p) / played + z2 / (4 * played * played))
    return max(0.0, (centre - margin) / (1 + z2 / played))


def _insert(db: Session):  # type: ignore[no-untyped-def]
    return pg_insert if db.get_bind().dialect.name == "postgresql" else sqlite_insert


def _bump(db: Session, player_id: str, game: str, played: int, won: int, stamp: datetime) -> None:
    """Add to a player's counters (creating the row) and refresh the Wilson bound."""
    insert = _insert(db)
    stmt = insert(PlayerStats).values(
        player_id=player_id, game=game, played=played, won=won, wilson=0.0,
        current_streak=0, longest_streak=0, last_played_at=stamp,
    )  # fmt: skip
    stmt = stmt.on_conflict_do_update(
        index_elements=[PlayerStats.player_id, PlayerStats.game],
        set_={
            "played": PlayerStats.played + played,
            "won": PlayerStats.won + won,
            "last_played_at": stamp,
        },
    ).returning(PlayerStats.played, PlayerStats.won)
    total_played, total_won = db.execute(stmt).one()
    db.execute(
        update(PlayerStats)
        .where(PlayerStats.player_id == player_id, PlayerStats.game == game)
        .values(wilson=wilson_lower_bound(total_won, total_played))
    )


def _bump_day(db: Session, record: Game, played: int, won: int) -> None:
    assert record.first_move_at is not None
    insert = _insert(db)
    for game in (record.game, ALL_GAMES):
        stmt = insert(DailyStats).values(
            player_id=record.player_id, game=game, day=record.first_move_at.date(),
            played=played, won=won,
        )  # fmt: skip
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=[DailyStats.player_id, DailyStats.game, DailyStats.day],
                set_={"played": DailyStats.played + played, "won": DailyStats.won + won},
            )
        )


def count_played(db: Session, record: Game, stamp: datetime) -> None:
    """The game's first move was just accepted: from now on it counts as played."""
    for game in (record.game, ALL_GAMES):
        _bump(db, record.player_id, game, 1, 0, stamp)
    _bump_day(db, record, 1, 0)
    unfinished_elsewhere = db.scalar(
        select(func.count())
        .select_from(Game)
        .where(
            Game.player_id == record.player_id,
            Game.game == record.game,
            Game.status == Status.PLAYING,
            Game.first_move_at.is_not(None),
            Game.id != record.id,
        )
    )
    if unfinished_elsewhere:
        _end_streaks(db, record.player_id, record.game)


def count_finished(db: Session, record: Game, stamp: datetime) -> None:
    """The game just ended (won, lost or resigned). Games never played count for nothing."""
    if record.first_move_at is None:
        return
    if record.status != Status.WON:
        _end_streaks(db, record.player_id, record.game)
        return
    for game in (record.game, ALL_GAMES):
        _bump(db, record.player_id, game, 0, 1, stamp)
        row = db.get(PlayerStats, (record.player_id, game), populate_existing=True)
        assert row is not None
        row.current_streak += 1
        row.longest_streak = max(row.longest_streak, row.current_streak)
        if record.duration_ms is not None and (
            row.best_ms is None or record.duration_ms < row.best_ms
        ):
            row.best_ms = record.duration_ms
        if row.fewest_moves is None or record.moves < row.fewest_moves:
            row.fewest_moves = record.moves
    _bump_day(db, record, 0, 1)


def _end_streaks(db: Session, player_id: str, game: str) -> None:
    db.execute(
        update(PlayerStats)
        .where(PlayerStats.player_id == player_id, PlayerStats.game.in_((game, ALL_GAMES)))
        .values(current_streak=0)
    )
