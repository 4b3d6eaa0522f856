"""The daily challenge (contract v3, Competition): each player's own deal of each game per UTC
day, one clean game (no hints, no undo), the day's standings and streaks of days won.

Everything here is derived from the stored games (``challenge`` rows point at them): standings
and streaks are computed on reading, so a recount from the move logs (``python -m app.cli
recount``) gives the same table as long as the games' rows agree with their logs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import case, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Challenge, Game, Player
from app.engine import GAMES, Status, UnknownGame, get_ruleset
from app.services import pool
from app.services.errors import AlreadyPlayed, InvalidRequest, NotFound
from app.services.game_views import GameView
from app.services.games import Games
from app.services.players import find_by_name
from app.services.seal import end_of_day

CALENDAR_DAYS = 30  # past days the calendar lists
BEST_GAMES = 10  # the day's best games that open as replays once the day is over


def start_of_day(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


@dataclass(frozen=True)
class ChallengeStatus:
    """One game's challenge of the day, as one player sees it."""

    day: date
    your_game: str | None
    streak: int

    @property
    def starts_at(self) -> datetime:
        return start_of_day(self.day)

    @property
    def ends_at(self) -> datetime:
        return end_of_day(self.day)


@dataclass(frozen=True)
class StandingRow:
    rank: int | None  # wins only, in order; others None
    player: str
    status: str
    moves: int
    par: int
    over_par: int | None  # wins only
    active_ms: int
    game_id: str | None  # shown once the day is over (the best games open as replays)


@dataclass(frozen=True)
class Standings:
    game: str
    day: date
    closed: bool  # the day is over: results are final, the best games open as replays
    rows: list[StandingRow]

    @property
    def ends_at(self) -> datetime:
        return end_of_day(self.day)


@dataclass(frozen=True)
class CalendarDay:
    day: date
    players: int
    winners: int


def check_game(slug: str) -> str:
    try:
        get_ruleset(slug)
    except UnknownGame as exc:
        raise InvalidRequest.of(exc.words) from None
    return slug


def rank_key(status: str, moves: int, par: int, active_ms: int) -> tuple[int, int, int]:
    """Standings order: wins by moves over par, then active time; then the rest."""
    if status == Status.WON:
        return (0, moves - par, active_ms)
    return (1 if status == Status.PLAYING else 2, 0, active_ms)


def streak_of(days_won: set[date], today: date) -> int:
    """Consecutive UTC days won, ending today, or yesterday while today's is not won yet."""
    day = today if today in days_won else today - timedelta(days=1)
    count = 0
    while day in days_won:
        count += 1
        day -= timedelta(days=1)
    return count


@dataclass
class Challenges:
    sessions: sessionmaker[Session]
    games: Games
    deal_key: bytes

    @property
    def clock(self) -> Callable[[], datetime]:
        """The seal's clock: the seal and the challenge share one notion of now."""
        return self.games.sealer.clock

    def today(self) -> date:
        return self.clock().astimezone(UTC).date()

    # -- playing ---------------------------------------------------------------------------

    def start(self, player_id: str, slug: str) -> GameView:
        """The caller's one challenge game of ``slug`` today, on a deal of their own."""
        check_game(slug)
        day = self.today()
        stamp = self.clock()
        try:
            with self.sessions.begin() as db:
                self._refuse_second(db, player_id, slug, day)
                deal, par = pool.claim(
                    db,
                    slug,
                    self.deal_key,
                    f"challenge|{slug}|{day.isoformat()}|{player_id}",
                    player_id=player_id,
                    kind=pool.CHALLENGE,
                    sealed_until=end_of_day(day),
                    stamp=stamp,
                )
                view = self.games.deal_own(db, player_id, slug, deal, pool.CHALLENGE)
                db.execute(
                    insert(Challenge).values(
                        game=slug, day=day, player_id=player_id, game_id=view.record.id, par=par
                    )
                )
        except IntegrityError:
            # Two starts at once: the other one won; this one's claim was rolled back with it.
            with self.sessions() as db:
                self._refuse_second(db, player_id, slug, day)
            raise
        return view

    def ready(self, slug: str) -> bool:
        """Whether today's challenge of ``slug`` can be started: a fresh certified deal is
        left for it (the page offers no button that could only be refused)."""
        check_game(slug)
        with self.sessions() as db:
            return pool.has_fresh(db, slug)

    @staticmethod
    def _refuse_second(db: Session, player_id: str, slug: str, day: date) -> None:
        found = db.scalar(
            select(Challenge.game_id).where(
                Challenge.game == slug, Challenge.day == day, Challenge.player_id == player_id
            )
        )
        if found is not None:
            raise AlreadyPlayed(found)

    # -- reading ---------------------------------------------------------------------------

    def status(self, player_id: str | None) -> dict[str, ChallengeStatus]:
        """Today's challenge of every game for ``player_id`` (None: nobody signed in)."""
        day = self.today()
        if player_id is None:
            return {slug: ChallengeStatus(day, None, 0) for slug in GAMES}
        with self.sessions() as db:
            mine = dict(
                db.execute(
                    select(Challenge.game, Challenge.game_id).where(
                        Challenge.player_id == player_id, Challenge.day == day
                    )
                ).all()
            )
            streaks = self._streaks(db, player_id, day)
        return {slug: ChallengeStatus(day, mine.get(slug), streaks.get(slug, 0)) for slug in GAMES}

    def streaks_by_name(self, name: str) -> dict[str, int]:
        """The challenge streaks of the player called ``name`` (none: no such player)."""
        with self.sessions() as db:
            player = find_by_name(db, name)
            found = {} if player is None else self._streaks(db, player.id, self.today())
        return {slug: n for slug, n in found.items() if n}

    def streaks(self, player_id: str) -> dict[str, int]:
        """The player's challenge streak of each game (0 where none)."""
        with self.sessions() as db:
            found = self._streaks(db, player_id, self.today())
        return {slug: found.get(slug, 0) for slug in GAMES}

    def _streaks(self, db: Session, player_id: str, today: date) -> dict[str, int]:
        # Days won, back to the first day no streak can still reach: a streak is unbroken
        # days, so a year of them is read at most (bounded by the days the player won).
        rows = db.execute(
            select(Challenge.game, Challenge.day)
            .join(Game, Game.id == Challenge.game_id)
            .where(Challenge.player_id == player_id, Game.status == Status.WON)
        ).all()
        won: dict[str, set[date]] = {}
        for slug, day in rows:
            won.setdefault(slug, set()).add(day)
        return {slug: streak_of(days, today) for slug, days in won.items()}

    def standings(self, slug: str, day: date | None = None) -> Standings:
        """The day's standings: wins by moves over par, then active time; then games in play,
        then losses. Game ids (replays) only once the day is over, for the best games."""
        check_game(slug)
        today = self.today()
        day = today if day is None else day
        if day > today:
            raise NotFound("That day's challenge has not started yet.")
        return self.standings_of(slug, day, closed=day < today)

    def standings_of(self, slug: str, day: date, *, closed: bool) -> Standings:
        """A day's standings as they stand (the recount reads any day's)."""
        with self.sessions() as db:
            rows = db.execute(
                select(
                    Player.name,
                    Game.status,
                    Game.moves,
                    Challenge.par,
                    Game.duration_ms,
                    Game.active_ms,
                    Game.id,
                )
                .join(Game, Game.id == Challenge.game_id)
                .join(Player, Player.id == Challenge.player_id)
                .where(Challenge.game == slug, Challenge.day == day)
            ).all()
        ordered = sorted(
            rows,
            key=lambda r: (
                *rank_key(r.status, r.moves, r.par, r.duration_ms or r.active_ms or 0),
                r.name,
            ),
        )
        out: list[StandingRow] = []
        rank = 0
        for r in ordered:
            won = r.status == Status.WON
            rank += won
            show_id = closed and won and rank <= BEST_GAMES
            out.append(
                StandingRow(
                    rank if won else None,
                    r.name,
                    r.status,
                    r.moves,
                    r.par,
                    r.moves - r.par if won else None,
                    (r.duration_ms if r.duration_ms is not None else r.active_ms) or 0,
                    r.id if show_id else None,
                )
            )
        return Standings(slug, day, closed, out)

    def calendar(self, slug: str, days: int = CALENDAR_DAYS) -> list[CalendarDay]:
        """The last ``days`` days before today, latest first: players and winners of each."""
        check_game(slug)
        today = self.today()
        first = today - timedelta(days=days)
        with self.sessions() as db:
            rows = db.execute(
                select(
                    Challenge.day,
                    func.count(),
                    func.sum(case((Game.status == Status.WON, 1), else_=0)),
                )
                .join(Game, Game.id == Challenge.game_id)
                .where(Challenge.game == slug, Challenge.day >= first, Challenge.day < today)
                .group_by(Challenge.day)
            ).all()
        found = {day: (int(n), int(w or 0)) for day, n, w in rows}
        return [
            CalendarDay(d, *found.get(d, (0, 0)))
            for d in (today - timedelta(days=back) for back in range(1, days + 1))
        ]
