"""Statistics (contract.md, v2): what counts as played and won, and the counters behind them.

Only **rated** games (the server drew the deal) count toward a player's record, and a rated
game counts as played from the moment it is dealt: the player has seen the layout, so walking
away from a bad opening cannot help a record. Only a won game counts as won. The counters, all
updated in the same transaction as the start, move or resignation that changes them:

- ``player_stats`` per player and game, plus an ``all`` row: played, won, the Wilson bound,
  best time, fewest moves, streaks (rated games only);
- ``daily_stats`` per player, game and UTC day the game was dealt (recent-period leaderboards);
- ``game_daily_stats`` per game and UTC day it was dealt (each game's overall win rate);
- ``deal_stats`` per deal: each player's **first finished** game of the deal, rated or casual:
  played, won, and the first games to reach the fewest moves and the fastest time among wins (a
  later game must do strictly better to take a record). A second attempt at a deal, made
  knowing its cards, never moves the deal's records.

A win counts on the day its game was dealt, so a period counts the games dealt in it, won or not.

Streaks (rated games): a win adds one; a loss or a resignation ends the current streak, and so
does starting a rated game while the previous rated game is still unfinished (the previous game
of the same kind for a game's streak, of any kind for the all-games streak): otherwise leaving
bad deals unfinished would protect a streak. Each unfinished game ends a streak once, when the
next game starts; a game left unfinished long ago does not stop every later streak.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any, Protocol, cast

from sqlalchemy import Connection, Table, case, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.db.models import ALL_GAMES, DailyStats, DealStats, Game, GameDailyStats, PlayerStats
from app.engine import Status

Z_95 = 1.959963984540054

# The counters are written with Core statements on the tables: the ORM's bulk machinery would
# cost more than the round trips themselves on every first move and every win.
_PLAYER_T = cast(Table, PlayerStats.__table__)
_DAILY_T = cast(Table, DailyStats.__table__)
_GAME_DAILY_T = cast(Table, GameDailyStats.__table__)
_DEAL_T = cast(Table, DealStats.__table__)
_GAME_T = cast(Table, Game.__table__)
_PLAYER, _DAILY, _GAME_DAILY, _DEAL, _GAME = (
    t.c for t in (_PLAYER_T, _DAILY_T, _GAME_DAILY_T, _DEAL_T, _GAME_T)
)


class PlayedGame(Protocol):
    """What the counters need to know of a game."""

    id: str
    player_id: str
    game: str
    deal: int
    rated: bool
    status: str
    moves: int
    created_at: datetime
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


def _insert(db: Connection):  # type: ignore[no-untyped-def]
    return pg_insert if db.dialect.name == "postgresql" else sqlite_insert


def _bump(db: Connection, record: PlayedGame, stamp: datetime, *, won: bool) -> None:
    """Count the game as played (``won`` False) or as won, in the player's rows for its game
    and for all games: one upsert run for both rows, then their Wilson bounds."""
    stmt = _insert(db)(_PLAYER_T)
    new = stmt.excluded
    changes: dict[str, Any] = {
        "played": _PLAYER.played + new.played,
        "won": _PLAYER.won + new.won,
        "last_played_at": new.last_played_at,
    }
    if won:
        streak = _PLAYER.current_streak + 1
        changes |= {
            "current_streak": streak,
            "longest_streak": case(
                (streak > _PLAYER.longest_streak, streak), else_=_PLAYER.longest_streak
            ),
            "best_ms": _least(_PLAYER.best_ms, new.best_ms),
            "fewest_moves": _least(_PLAYER.fewest_moves, new.fewest_moves),
        }
    # A list of parameter sets (rather than multi-row VALUES) keeps the statement cacheable.
    rows = [
        {
            "player_id": record.player_id, "game": game, "played": 0 if won else 1,
            "won": int(won), "wilson": 0.0, "current_streak": int(won),
            "longest_streak": int(won), "best_ms": record.duration_ms if won else None,
            "fewest_moves": record.moves if won else None, "last_played_at": stamp,
        }
        for game in (record.game, ALL_GAMES)
    ]  # fmt: skip
    totals = db.execute(
        stmt.on_conflict_do_update(
            index_elements=[_PLAYER.player_id, _PLAYER.game], set_=changes
        ).returning(_PLAYER.game, _PLAYER.played, _PLAYER.won),
        rows,
    ).all()
    bounds = {g: wilson_lower_bound(w, p) for g, p, w in totals}
    db.execute(
        update(_PLAYER_T)
        .where(_PLAYER.player_id == record.player_id, _PLAYER.game.in_(list(bounds)))
        .values(wilson=case(*((_PLAYER.game == g, b) for g, b in bounds.items())))
    )


def _least(current: Any, candidate: Any) -> Any:
    """The smaller of a stored record and a new value, the new one when none is stored."""
    return case((or_(current.is_(None), candidate < current), candidate), else_=current)


def utc_day(stamp: datetime) -> date:
    """The UTC date of a timestamp (SQLite hands back naive UTC datetimes)."""
    return stamp.date() if stamp.tzinfo is None else stamp.astimezone(UTC).date()


def _bump_day(db: Connection, record: PlayedGame, played: int, won: int) -> None:
    """Add to the player's and the game's counters of the day the game was dealt."""
    day = utc_day(record.created_at)
    insert = _insert(db)
    stmt = insert(_DAILY_T)
    db.execute(
        stmt.on_conflict_do_update(
            index_elements=[_DAILY.player_id, _DAILY.game, _DAILY.day],
            set_={
                "played": _DAILY.played + stmt.excluded.played,
                "won": _DAILY.won + stmt.excluded.won,
            },
        ),
        [
            {"player_id": record.player_id, "game": game, "day": day, "played": played, "won": won}
            for game in (record.game, ALL_GAMES)
        ],
    )
    totals = insert(_GAME_DAILY_T).values(game=record.game, day=day, played=played, won=won)
    db.execute(
        totals.on_conflict_do_update(
            index_elements=[_GAME_DAILY.game, _GAME_DAILY.day],
            set_={"played": _GAME_DAILY.played + played, "won": _GAME_DAILY.won + won},
        )
    )


def count_dealt(db: Connection, record: PlayedGame, stamp: datetime) -> None:
    """A rated game was just dealt: from now on it counts as played."""
    assert record.rated
    _bump(db, record, stamp, won=False)
    _bump_day(db, record, 1, 0)

    # Is the player's previous rated game (of this kind; of any kind) still unfinished?
    def previous(*same_kind: Any) -> Any:
        return (
            select(_GAME.status)
            .where(
                _GAME.player_id == record.player_id,
                _GAME.rated.is_(True),
                _GAME.id != record.id,
                *same_kind,
            )
            .order_by(_GAME.created_at.desc())
            .limit(1)
            .scalar_subquery()
        )

    kind, any_kind = db.execute(select(previous(_GAME.game == record.game), previous())).one()
    ended = tuple(
        key
        for key, status in ((record.game, kind), (ALL_GAMES, any_kind))
        if status == Status.PLAYING
    )
    if ended:
        _end_streaks(db, record.player_id, ended)


def count_finished(db: Connection, record: PlayedGame, stamp: datetime) -> None:
    """The game just ended (won, lost or resigned)."""
    if record.rated:
        if record.status == Status.WON:
            _bump(db, record, stamp, won=True)
            _bump_day(db, record, 0, 1)
        else:
            _end_streaks(db, record.player_id, (record.game, ALL_GAMES))
    if _first_finished_of_deal(db, record):
        _count_deal(db, record)


def _first_finished_of_deal(db: Connection, record: PlayedGame) -> bool:
    earlier = db.execute(
        select(_GAME.id)
        .where(
            _GAME.player_id == record.player_id,
            _GAME.game == record.game,
            _GAME.deal == record.deal,
            _GAME.id != record.id,
            _GAME.finished_at.is_not(None),
        )
        .limit(1)
    ).first()
    return earlier is None


def _count_deal(db: Connection, record: PlayedGame) -> None:
    """The player's first finished game of the deal goes into the deal's counts and records.

    One statement: every SET expression reads the row as it was, under the row's lock."""
    won = record.status == Status.WON
    ms = record.duration_ms if won else None  # set for every won game: a win takes a move
    stmt = _insert(db)(_DEAL_T).values(
        game=record.game,
        deal=record.deal,
        played=1,
        won=int(won),
        fewest_moves=record.moves if won else None,
        fewest_game_id=record.id if won else None,
        fastest_ms=ms,
        fastest_game_id=record.id if won else None,
    )
    changes: dict[str, Any] = {"played": _DEAL.played + 1}
    if won:
        fewer = or_(_DEAL.fewest_moves.is_(None), _DEAL.fewest_moves > record.moves)
        faster = or_(_DEAL.fastest_ms.is_(None), _DEAL.fastest_ms > ms)
        changes |= {
            "won": _DEAL.won + 1,
            "fewest_moves": case((fewer, record.moves), else_=_DEAL.fewest_moves),
            "fewest_game_id": case((fewer, record.id), else_=_DEAL.fewest_game_id),
            "fastest_ms": case((faster, ms), else_=_DEAL.fastest_ms),
            "fastest_game_id": case((faster, record.id), else_=_DEAL.fastest_game_id),
        }
    db.execute(stmt.on_conflict_do_update(index_elements=[_DEAL.game, _DEAL.deal], set_=changes))


def _end_streaks(db: Connection, player_id: str, games: tuple[str, ...]) -> None:
    db.execute(
        update(_PLAYER_T)
        .where(_PLAYER.player_id == player_id, _PLAYER.game.in_(games))
        .values(current_streak=0)
    )


def count_hinted(db: Connection, player_id: str, game: str) -> None:
    """A rated game took its first hint and became casual: it stays played (it counted from
    its deal), can no longer add a win, and ends the player's streaks as a loss would — so a
    hint cannot rescue a record from a deal going badly."""
    _end_streaks(db, player_id, (game, ALL_GAMES))
