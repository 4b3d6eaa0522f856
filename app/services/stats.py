"""Statistics (contract.md): what counts as played and won, and the counters behind them.

A game counts as played from its first accepted move, for ever; only a won game counts as won,
so abandoning a bad deal cannot help a record. The counters, all updated in the same transaction
as the move (or resignation) that changes them:

- ``player_stats`` per player and game, plus an ``all`` row: played, won, the Wilson bound,
  best time, fewest moves, streaks;
- ``daily_stats`` per player, game and UTC day of the first move (recent-period leaderboards);
- ``game_daily_stats`` per game and UTC day of the first move (each game's overall win rate);
- ``deal_stats`` per deal: played, won, and the first games to reach the fewest moves and the
  fastest time among wins (a later game must do strictly better to take a record).

A win counts on the day its game was first played, so a period counts the games first played in
it, won or not.

Streaks: a win adds one; a loss or a resignation ends the current streak, and so does starting
to play a game while the previous game is still unfinished (the previous game of the same kind
for a game's streak, of any kind for the all-games streak): otherwise leaving bad deals
unfinished would protect a streak. Each unfinished game ends a streak once, when the next game
starts; a game left unfinished long ago does not stop every later streak.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Protocol

from sqlalchemy import case, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.db.models import ALL_GAMES, DailyStats, DealStats, Game, GameDailyStats, PlayerStats
from app.engine import Status

Z_95 = 1.959963984540054


class PlayedGame(Protocol):
    """What the counters need to know of a game."""

    id: str
    player_id: str
    game: str
    deal: int
    status: str
    moves: int
    first_move_at: datetime | None
    duration_ms: int | None


def wilson_lower_bound(won: int, played: int, z: float = Z_95) -> float:
    """Lower bound of the Wilson score interval for ``won`` successes in ``played`` trials."""
    if played <= 0 or won <= 0:
        return 0.0  # exactly: the formula leaves rounding dust that would split ties at zero
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


def utc_day(stamp: datetime) -> date:
    """The UTC date of a timestamp (SQLite hands back naive UTC datetimes)."""
    return stamp.date() if stamp.tzinfo is None else stamp.astimezone(UTC).date()


def _bump_day(db: Session, record: PlayedGame, played: int, won: int) -> None:
    """Add to the player's and the game's counters of the day of the game's first move."""
    assert record.first_move_at is not None
    day = utc_day(record.first_move_at)
    insert = _insert(db)
    for game in (record.game, ALL_GAMES):
        stmt = insert(DailyStats).values(
            player_id=record.player_id, game=game, day=day, played=played, won=won
        )
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=[DailyStats.player_id, DailyStats.game, DailyStats.day],
                set_={"played": DailyStats.played + played, "won": DailyStats.won + won},
            )
        )
    totals = insert(GameDailyStats).values(game=record.game, day=day, played=played, won=won)
    db.execute(
        totals.on_conflict_do_update(
            index_elements=[GameDailyStats.game, GameDailyStats.day],
            set_={"played": GameDailyStats.played + played, "won": GameDailyStats.won + won},
        )
    )


def count_played(db: Session, record: PlayedGame, stamp: datetime) -> None:
    """The game's first move was just accepted: from now on it counts as played."""
    for game in (record.game, ALL_GAMES):
        _bump(db, record.player_id, game, 1, 0, stamp)
    _bump_day(db, record, 1, 0)
    deal = _insert(db)(DealStats).values(game=record.game, deal=record.deal, played=1, won=0)
    db.execute(
        deal.on_conflict_do_update(
            index_elements=[DealStats.game, DealStats.deal],
            set_={"played": DealStats.played + 1},
        )
    )
    for key, same_kind in ((record.game, True), (ALL_GAMES, False)):
        previous = (
            select(Game.status)
            .where(
                Game.player_id == record.player_id,
                Game.first_move_at.is_not(None),
                Game.id != record.id,
            )
            .order_by(Game.first_move_at.desc())
            .limit(1)
        )
        if same_kind:
            previous = previous.where(Game.game == record.game)
        if db.scalar(previous) == Status.PLAYING:
            _end_streaks(db, record.player_id, (key,))


def count_finished(db: Session, record: PlayedGame, stamp: datetime) -> None:
    """The game just ended (won, lost or resigned). Games never played count for nothing."""
    if record.first_move_at is None:
        return
    if record.status != Status.WON:
        _end_streaks(db, record.player_id, (record.game, ALL_GAMES))
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
    _count_deal_win(db, record)


def _count_deal_win(db: Session, record: PlayedGame) -> None:
    # One statement: every SET expression reads the row as it was, under the row's lock.
    fewer = or_(DealStats.fewest_moves.is_(None), DealStats.fewest_moves > record.moves)
    ms = record.duration_ms  # set for every won game: a win takes at least one move
    faster = or_(DealStats.fastest_ms.is_(None), DealStats.fastest_ms > ms)
    db.execute(
        update(DealStats)
        .where(DealStats.game == record.game, DealStats.deal == record.deal)
        .values(
            won=DealStats.won + 1,
            fewest_moves=case((fewer, record.moves), else_=DealStats.fewest_moves),
            fewest_game_id=case((fewer, record.id), else_=DealStats.fewest_game_id),
            fastest_ms=case((faster, ms), else_=DealStats.fastest_ms),
            fastest_game_id=case((faster, record.id), else_=DealStats.fastest_game_id),
        )
    )


def _end_streaks(db: Session, player_id: str, games: tuple[str, ...]) -> None:
    db.execute(
        update(PlayerStats)
        .where(PlayerStats.player_id == player_id, PlayerStats.game.in_(games))
        .values(current_streak=0)
    )
