"""Leaderboards and player records, read from the statistics counters.

All-time boards read ``player_stats`` in index order (game, wilson, won) and are always live.
A recent period has to add up every ``daily_stats`` row of the period (at scale, hundreds of
thousands), so its rows are kept for ``cache_seconds`` (a setting; 0 turns it off) and refreshed
in the background once older, while the board keeps answering; each game's overall win rate is
always live (``game_daily_stats``: a few hundred rows).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import case, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.faults import is_unavailable, summary
from app.db.models import (
    ALL_GAMES,
    DailyStats,
    Game,
    GameDailyStats,
    Player,
    PlayerStats,
    RaceRating,
)
from app.engine import GAMES, Status
from app.services import same_deal
from app.services.errors import N_, InvalidRequest, NotFound
from app.services.players import find_by_name, now
from app.services.ratings import RatingOut, RatingRow, ratings_of
from app.services.ratings import board as race_board
from app.services.same_deal import Relation
from app.services.seal import Sealer, number_secret, opened_to_all, shown_number
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
        # Catalog messages (the pages say them in the player's language).
        return {"all": N_("All time"), "30d": N_("Last 30 days"), "7d": N_("Last 7 days")}[
            self.value
        ]


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
        raise InvalidRequest("There is no game called %(game)s.", game=repr(game))
    try:
        chosen = Period(period or "all")
    except ValueError:
        raise InvalidRequest("The period is one of all, 30d and 7d.") from None
    return slug, chosen


_log = logging.getLogger(__name__)
_CacheKey = tuple[str, int, date, int]  # game key, days, today, limit


@dataclass
class _Cached:
    rows: list[Ranked]
    made: float
    refreshing: bool = False


@dataclass
class Leaderboards:
    sessions: sessionmaker[Session]
    min_games: int
    today: Callable[[], date] = lambda: datetime.now(UTC).date()
    cache_seconds: float = 0.0  # how long a recent period's rows are served before a refresh
    # Finished games of a sealed deal link to their masked board, not a replay (player pages).
    sealer: Sealer | None = None
    _cache: dict[_CacheKey, _Cached] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def board(self, game: str | None, period: Period, limit: int = BOARD_SIZE) -> Board:
        key = game or ALL_GAMES
        if period.days is None:
            with self.sessions() as db:
                rows = self._all_time(db, key, limit)
                totals = self._totals(db, None)
        else:
            today = self.today()
            since = today - timedelta(days=period.days - 1)
            rows = self._recent((key, period.days, today, limit))
            with self.sessions() as db:
                totals = self._totals(db, since)
        return Board(game, period, self.min_games, rows, totals)

    def race_ratings(self, player_ids: list[str], slug: str) -> dict[str, RatingOut]:
        """The race ratings of one game of some players, by name (those who have one)."""
        with self.sessions() as db:
            rows = db.execute(
                select(Player.name, RaceRating.mu, RaceRating.sigma, RaceRating.races)
                .join(RaceRating, RaceRating.player_id == Player.id)
                .where(Player.id.in_(player_ids), RaceRating.game == slug)
                .order_by(RaceRating.rating.desc(), Player.name)
            ).all()
        return {n: RatingOut(mu - 3 * s, mu, s, races) for n, mu, s, races in rows}

    def races(self, slug: str) -> list[RatingRow]:
        """The race leaderboard of a game (rated races' ratings)."""
        with self.sessions() as db:
            return race_board(db, slug)

    def player(self, name: str, viewer: str | None = None) -> PlayerRecord:
        """A player's record as ``viewer`` may see it (:func:`player_record`)."""
        return player_record(self.sessions, name, viewer, self.sealer)

    def _all_time(self, db: Session, key: str, limit: int) -> list[Ranked]:
        # The index (game, wilson, won) hands these over already in order.
        found = db.execute(
            select(Player.name, PlayerStats.played, PlayerStats.won, PlayerStats.wilson)
            .join(Player, Player.id == PlayerStats.player_id)
            .where(PlayerStats.game == key, PlayerStats.played >= self.min_games)
            .where(Player.banned_at.is_(None))  # a banned player's games do not count
            .order_by(PlayerStats.wilson.desc(), PlayerStats.won.desc())
            .limit(limit + 50)  # room to order ties by name and still return ``limit`` rows
        ).all()
        return rank_rows([(n, p, w, s) for n, p, w, s in found])[:limit]

    # -- recent periods -----------------------------------------------------------------------

    def _recent(self, key: _CacheKey) -> list[Ranked]:
        if self.cache_seconds <= 0:
            return self._since(key)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                stale = time.monotonic() - hit.made >= self.cache_seconds
                if stale and not hit.refreshing:
                    hit.refreshing = True
                    threading.Thread(target=self._refresh, args=(key,), daemon=True).start()
                return hit.rows
        rows = self._since(key)  # the first request of the day computes in place
        with self._lock:
            for old in [k for k in self._cache if k[2] != key[2]]:
                del self._cache[old]  # yesterday's windows
            self._cache[key] = _Cached(rows, time.monotonic())
        return rows

    def _refresh(self, key: _CacheKey) -> None:
        try:
            rows = self._since(key)
        except Exception as exc:  # keep serving the rows we have; the next request tries again
            if is_unavailable(exc):  # the database is away: one line, not a traceback
                _log.warning("refreshing the %s leaderboard failed: %s", key, summary(exc))
            else:
                _log.exception("refreshing the %s leaderboard failed", key)
            with self._lock:
                if key in self._cache:
                    self._cache[key].refreshing = False
            return
        with self._lock:
            self._cache[key] = _Cached(rows, time.monotonic())

    def _since(self, key: _CacheKey) -> list[Ranked]:
        game, days, today, limit = key
        since = today - timedelta(days=days - 1)
        played, won = func.sum(DailyStats.played), func.sum(DailyStats.won)
        with self.sessions() as db:
            found = db.execute(
                select(DailyStats.player_id, played, won)
                .where(DailyStats.game == game, DailyStats.day >= since)
                .group_by(DailyStats.player_id)
                .having(played >= self.min_games)
            ).all()
            scored = sorted(
                ((pid, int(p), int(w), wilson_lower_bound(int(w), int(p))) for pid, p, w in found),
                key=lambda r: (-r[3], -r[2]),
            )[: limit + 50]
            ids = [r[0] for r in scored]
            names: dict[str, str] = dict(
                db.execute(
                    select(Player.id, Player.name).where(
                        Player.id.in_(ids), Player.banned_at.is_(None)
                    )
                ).all()
            )
        return rank_rows([(names[pid], p, w, s) for pid, p, w, s in scored if pid in names])[:limit]

    # -- each game's overall win rate -------------------------------------------------------------

    @staticmethod
    def _totals(db: Session, since: date | None) -> dict[str, Totals]:
        query = select(
            GameDailyStats.game, func.sum(GameDailyStats.played), func.sum(GameDailyStats.won)
        ).group_by(GameDailyStats.game)
        if since is not None:
            query = query.where(GameDailyStats.day >= since)
        return _totals(db.execute(query).all())


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


@dataclass(frozen=True)
class CasualRecord:
    """Casual games (chosen deals) of one game: reported apart, never in a win rate's ranking."""

    game: str
    played: int
    won: int


@dataclass(frozen=True)
class RecentGame:
    id: str
    game: str
    deal: int | None  # None while it is sealed (app/services/seal.py)
    rated: bool
    status: str
    moves: int
    duration_ms: int | None
    when: datetime | None
    # What the viewer may open of it (the same-deal rule): its board, its replay, or neither.
    link: str | None = None


@dataclass(frozen=True)
class PlayerRecord:
    name: str
    games: list[GameRecord]  # rated games: every game slug in registry order, then ``all``
    recent: list[RecentGame]
    casual: list[CasualRecord] = field(default_factory=list)  # games with any casual game
    race_ratings: dict[str, RatingOut] = field(default_factory=dict)  # rated races, per game


def player_record(
    sessions: sessionmaker[Session],
    name: str,
    viewer: str | None = None,
    sealer: Sealer | None = None,
) -> PlayerRecord:
    """A player's rated record per game, their casual games apart, and their recent games
    (rated from the deal, casual from their first move) as ``viewer`` may open them
    (``sealer``: a finished game of a sealed deal links to its masked board, not its replay)."""
    with sessions() as db:
        player = find_by_name(db, name)
        if player is None:
            raise NotFound("There is no player with that name.")
        rows = {
            s.game: s
            for s in db.scalars(select(PlayerStats).where(PlayerStats.player_id == player.id))
        }
        casual = db.execute(
            select(Game.game, func.count(), func.sum(case((Game.status == Status.WON, 1), else_=0)))
            .where(
                Game.player_id == player.id,
                Game.rated.is_(False),
                Game.first_move_at.is_not(None),
            )
            .group_by(Game.game)
        ).all()
        found = db.execute(
            select(Game, number_secret(now()).label("race_on"))
            .where(Game.player_id == player.id, or_(Game.rated, Game.first_move_at.is_not(None)))
            .order_by(Game.created_at.desc(), Game.id)
            .limit(RECENT_GAMES)
        ).all()
        recent = [g for g, _ in found]
        race_ratings = ratings_of(db, player.id)
        racing = {g.id for g, race_on in found if race_on}
        related = (
            {}
            if viewer == player.id
            else same_deal.relations(db, viewer, {(g.game, g.deal) for g in recent})
        )
        finished = {
            (g.game, g.deal) for g in recent if g.status != Status.PLAYING and g.id not in racing
        }
        seals = {} if sealer is None else sealer.of_many(db, finished)
    games = []
    for slug in (*GAMES, ALL_GAMES):
        s = rows.get(slug)
        games.append(
            GameRecord(slug, s.played, s.won, s.best_ms, s.fewest_moves, s.current_streak,
                       s.longest_streak)
            if s else GameRecord(slug, 0, 0, None, None, 0, 0)
        )  # fmt: skip
    by_game = {slug: CasualRecord(slug, int(n), int(w or 0)) for slug, n, w in casual}
    return PlayerRecord(
        player.name,
        games,
        [
            RecentGame(g.id, g.game,
                       shown_number(g.deal, rated=g.rated, status=g.status,
                                    race_on=g.id in racing),
                       g.rated, g.status, g.moves, g.duration_ms,
                       g.first_move_at or g.created_at,
                       _link(g, related.get((g.game, g.deal)), own=viewer == player.id,
                             racing=g.id in racing,
                             sealed=seals.get((g.game, g.deal)) is not None))
            for g in recent
        ],
        [by_game[slug] for slug in GAMES if slug in by_game],
        race_ratings,
    )  # fmt: skip


def _link(
    game: Game, related: Relation | None, *, own: bool, racing: bool, sealed: bool = False
) -> str | None:
    """Where the viewer may follow a game from a player page: a replay once they may see the
    whole game, the board of a game in play if it spoils nothing of theirs, else nowhere. A
    game of a race still on is its owner's alone (contract v3): only they get a link, to its
    board. A finished game of a sealed deal has no replay yet (app/services/seal.py): its
    board, shown as if in play."""
    if racing:
        return f"/games/{game.id}" if own else None
    opened = opened_to_all(game.competition) and game.status != Status.PLAYING and not sealed
    if own or related is Relation.FINISHED or opened:
        replayable = game.status != Status.PLAYING and not sealed
        return f"/games/{game.id}/replay" if replayable else f"/games/{game.id}"
    if related is Relation.IN_PLAY:
        return None
    return f"/games/{game.id}" if game.status == Status.PLAYING else None
