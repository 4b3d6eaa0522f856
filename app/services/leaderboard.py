"""Leaderboards and player records, read from the statistics counters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import ALL_GAMES, DailyStats, Game, Player, PlayerStats
from app.engine import GAMES
from app.services.errors import InvalidRequest, NotFound
from app.services.players import find_by_name
from app.services.stats import wilson_lower_bound

BOARD_SIZE = 100
RECENT_GAMES = 20


class Period(StrEnum):
    ALL = "all"
    DAYS_30 = "30d"
    DAYS_7 = "7d"

    @property
    def days(self) -> int | None:
        return {"all": None, "30d": 30, "7d": 7}[self.value]

    @property
    def label(self) -> str:
        return {"all": "All time", "30d": "Last 30 days", "7d": "Last 7 days"}[self.value]


@dataclass(frozen=True)
class Ranked:
    rank: int
    player: str
    played: int
    won: int
    wilson: float

    @property
    def win_rate(self) -> float:
        return self.won / self.played if self.played else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "player": self.player,
            "played": self.played,
            "won": self.won,
            "win_rate": round(self.win_rate, 6),
            "wilson_lower_bound": round(self.wilson, 6),
        }


@dataclass(frozen=True)
class Totals:
    played: int
    won: int

    @property
    def win_rate(self) -> float | None:
        return self.won / self.played if self.played else None


@dataclass(frozen=True)
class Board:
    game: str | None  # None: all games together
    period: Period
    min_games: int
    rows: list[Ranked]
    totals: dict[str, Totals]  # per game slug, across all players

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "period": self.period.value,
            "min_games": self.min_games,
            "rows": [r.to_json() for r in self.rows],
            "games": {
                slug: {"played": t.played, "won": t.won, "win_rate": t.win_rate}
                for slug, t in self.totals.items()
            },
        }


def rank_rows(rows: list[tuple[str, int, int, float]]) -> list[Ranked]:
    """Order by Wilson lower bound, then wins; equal on both means equal rank (1, 2, 2, 4)."""
    ordered = sorted(rows, key=lambda r: (-r[3], -r[2], r[0].lower()))
    out: list[Ranked] = []
    for i, (name, played, won, wilson) in enumerate(ordered):
        tied = out and (out[-1].wilson, out[-1].won) == (wilson, won)
        out.append(Ranked(out[-1].rank if tied else i + 1, name, played, won, wilson))
    return out


def parse_board_args(game: str | None, period: str | None) -> tuple[str | None, Period]:
    if game in (None, "", ALL_GAMES):
        slug = None
    elif game in GAMES:
        slug = game
    else:
        raise InvalidRequest(f"There is no game called {game!r}.")
    try:
        chosen = Period(period or "all")
    except ValueError:
        raise InvalidRequest("The period is one of all, 30d and 7d.") from None
    return slug, chosen


@dataclass
class Leaderboards:
    sessions: sessionmaker[Session]
    min_games: int
    today: Callable[[], date] = lambda: datetime.now(UTC).date()

    def board(self, game: str | None, period: Period, limit: int = BOARD_SIZE) -> Board:
        key = game or ALL_GAMES
        with self.sessions() as db:
            if period.days is None:
                rows = self._all_time(db, key, limit)
                totals = self._totals_all_time(db)
            else:
                since = self.today() - timedelta(days=period.days - 1)
                rows = self._since(db, key, since, limit)
                totals = self._totals_since(db, since)
        return Board(game, period, self.min_games, rows, totals)

    def _all_time(self, db: Session, key: str, limit: int) -> list[Ranked]:
        # The index (game, wilson, won) hands these over already in order.
        found = db.execute(
            select(Player.name, PlayerStats.played, PlayerStats.won, PlayerStats.wilson)
            .join(Player, Player.id == PlayerStats.player_id)
            .where(PlayerStats.game == key, PlayerStats.played >= self.min_games)
            .order_by(PlayerStats.wilson.desc(), PlayerStats.won.desc())
            .limit(limit + 50)  # room to order ties by name and still return ``limit`` rows
        ).all()
        return rank_rows([(n, p, w, s) for n, p, w, s in found])[:limit]

    def _since(self, db: Session, key: str, since: date, limit: int) -> list[Ranked]:
        played, won = func.sum(DailyStats.played), func.sum(DailyStats.won)
        found = db.execute(
            select(DailyStats.player_id, played, won)
            .where(DailyStats.game == key, DailyStats.day >= since)
            .group_by(DailyStats.player_id)
            .having(played >= self.min_games)
        ).all()
        scored = sorted(
            ((pid, int(p), int(w), wilson_lower_bound(int(w), int(p))) for pid, p, w in found),
            key=lambda r: (-r[3], -r[2]),
        )[: limit + 50]
        names = dict(
            db.execute(select(Player.id, Player.name).where(Player.id.in_([r[0] for r in scored])))
            .tuples()
            .all()
        )
        return rank_rows([(names[pid], p, w, s) for pid, p, w, s in scored])[:limit]

    def _totals_all_time(self, db: Session) -> dict[str, Totals]:
        found = db.execute(
            select(PlayerStats.game, func.sum(PlayerStats.played), func.sum(PlayerStats.won))
            .where(PlayerStats.game != ALL_GAMES)
            .group_by(PlayerStats.game)
        ).all()
        return _totals(found)

    def _totals_since(self, db: Session, since: date) -> dict[str, Totals]:
        found = db.execute(
            select(DailyStats.game, func.sum(DailyStats.played), func.sum(DailyStats.won))
            .where(DailyStats.game != ALL_GAMES, DailyStats.day >= since)
            .group_by(DailyStats.game)
        ).all()
        return _totals(found)


def _totals(found: Any) -> dict[str, Totals]:
    by_game = {slug: Totals(int(p or 0), int(w or 0)) for slug, p, w in found}
    return {slug: by_game.get(slug, Totals(0, 0)) for slug in GAMES}


@dataclass(frozen=True)
class GameRecord:
    game: str
    played: int
    won: int
    best_ms: int | None
    fewest_moves: int | None
    current_streak: int
    longest_streak: int

    @property
    def win_rate(self) -> float | None:
        return self.won / self.played if self.played else None

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "played": self.played,
            "won": self.won,
            "win_rate": self.win_rate,
            "best_seconds": None if self.best_ms is None else self.best_ms / 1000,
            "fewest_moves": self.fewest_moves,
            "current_streak": self.current_streak,
            "longest_streak": self.longest_streak,
        }


@dataclass(frozen=True)
class RecentGame:
    id: str
    game: str
    deal: int
    status: str
    moves: int
    duration_ms: int | None
    when: datetime | None


@dataclass(frozen=True)
class PlayerRecord:
    name: str
    games: list[GameRecord]  # every game slug in registry order, then ``all``
    recent: list[RecentGame]

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.name,
            "games": [g.to_json() for g in self.games],
            "recent": [
                {
                    "id": r.id,
                    "game": r.game,
                    "deal": r.deal,
                    "status": r.status,
                    "moves": r.moves,
                    "seconds": None if r.duration_ms is None else r.duration_ms / 1000,
                }
                for r in self.recent
            ],
        }


def player_record(sessions: sessionmaker[Session], name: str) -> PlayerRecord:
    with sessions() as db:
        player = find_by_name(db, name)
        if player is None:
            raise NotFound("There is no player with that name.")
        rows = {
            s.game: s
            for s in db.scalars(select(PlayerStats).where(PlayerStats.player_id == player.id))
        }
        recent = db.scalars(
            select(Game)
            .where(Game.player_id == player.id, Game.first_move_at.is_not(None))
            .order_by(Game.first_move_at.desc())
            .limit(RECENT_GAMES)
        ).all()
    games = []
    for slug in (*GAMES, ALL_GAMES):
        s = rows.get(slug)
        games.append(
            GameRecord(slug, s.played, s.won, s.best_ms, s.fewest_moves, s.current_streak,
                       s.longest_streak)
            if s else GameRecord(slug, 0, 0, None, None, 0, 0)
        )  # fmt: skip
    return PlayerRecord(
        player.name,
        games,
        [RecentGame(g.id, g.game, g.deal, g.status, g.moves, g.duration_ms, g.first_move_at)
         for g in recent],
    )  # fmt: skip
