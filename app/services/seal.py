"""Sealed deals (contract v3): the one place that decides what a competition keeps hidden.

One person may hold any number of accounts and anonymous browsers. So while a competition on a
deal is open, the deal is **sealed** for everyone, its players included:

| Competition | sealed until |
| --- | --- |
| a rated game in play | the game ends |
| a running race | every racer has finished |
| the deal of the day | the UTC day ends |
| a daily challenge deal (a deal of one's own) | the UTC day ends |
| an event's deal (a deal of one's own) | the event ends |

While a deal is sealed no game of it shows a card that was never face up in that game (a
finished game is shown as if still in play), and no replay, move log, solution, verdict or
record of it is given. Rated and race games also hide their deal **number** until they end, so
that a second account cannot deal the same cards (:func:`number_hidden`); the deal of the day's
number is public, its cards are not. A deal of one's own (app/services/pool.py) is sealed
while its claim says so, its number hidden, and nobody else may start a game of it meanwhile
(:meth:`Sealer.refuse_start`); once it opens, its finished games open to everyone
(:func:`opened_to_all`): the pool never deals it in a competition again.

Every reader of games, deals, lists and events asks here; a leak found later is mended here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, exists, or_, select
from sqlalchemy.orm import Session

from app.db.models import CompetitionDeal, Game, Race
from app.engine import Status
from app.services import daily
from app.services.errors import DealSealed, RaceInPlay
from app.services.statuses import RaceStatus

RUNNING = RaceStatus.RUNNING


class SealKind(StrEnum):
    RATED = "rated"
    RACE = "race"
    DAILY = "daily"
    CHALLENGE = "challenge"
    EVENT = "event"


@dataclass(frozen=True)
class Seal:
    kind: SealKind
    until: datetime | None  # a known time, or None: when the game or the race ends

    @property
    def opens(self) -> str:
        """When the seal lifts, in a player's words."""
        if self.kind is SealKind.RATED:
            return "when the rated game on it ends"
        if self.kind is SealKind.RACE:
            return "when the race on it ends"
        assert self.until is not None
        if self.kind is SealKind.CHALLENGE:
            return f"at {self.until:%Y-%m-%d %H:%M} UTC, when its day's challenge ends"
        if self.kind is SealKind.EVENT:
            return f"at {self.until:%Y-%m-%d %H:%M} UTC, when the event ends"
        return f"at {self.until:%Y-%m-%d %H:%M} UTC, when its day ends"

    @property
    def message(self) -> str:
        return (
            "This deal is sealed while a competition on it is open: its hidden cards, replays, "
            f"solution and records open {self.opens}."
        )

    @property
    def hides_number(self) -> bool:
        """Rated and race numbers are secret while sealed; the deal of the day's is public."""
        return self.kind is not SealKind.DAILY


def end_of_day(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), time(), tzinfo=UTC)


# A game's race is still on: its number stays hidden, even once that game is over.
RACE_RUNNING: Any = exists().where(Race.id == Game.race_id, Race.status == RUNNING)


def number_secret(at: datetime) -> Any:
    """A list's column: the game's number stays hidden, even once the game is over — its race
    is still on, or it is a competition deal of someone's own still sealed at ``at``."""
    own = exists().where(
        CompetitionDeal.game == Game.game,
        CompetitionDeal.deal == Game.deal,
        CompetitionDeal.sealed_until > at,
    )
    return or_(RACE_RUNNING, own)


def opened_to_all(competition: str | None) -> bool:
    """A finished game on a deal of one's own whose seal has lifted shows everything to
    everyone (replays, move log): nobody can be dealt that deal in a competition again, so
    there is no win left to copy. (Called once the seal has been checked.)"""
    return competition is not None


def number_hidden(*, rated: bool, playing: bool, race_running: bool) -> bool:
    """Whether a game's deal number is hidden from everyone, its owner included: a rated game
    in play, or any game of a race still on."""
    return (rated and playing) or race_running


def shown_number(deal: int, *, rated: bool, status: str, race_on: bool) -> int | None:
    """A game's deal number as a list may show it (None while hidden: :func:`number_hidden`)."""
    playing = status == Status.PLAYING
    return None if number_hidden(rated=rated, playing=playing, race_running=race_on) else deal


def shown_race_deal(deal: int, status: str) -> int | None:
    """A race's deal number as the room, its pages and its events may show it: None while the
    race is on (a second account must not deal it)."""
    return None if status == RUNNING else deal


def race_running(db: Session | Connection, race_id: int | None) -> bool:
    if race_id is None:
        return False
    return db.scalar(select(Race.status).where(Race.id == race_id)) == RUNNING


def check_race_read(
    db: Session | Connection, race_id: int | None, owner: str, viewer: str | None
) -> None:
    """A game of a running race is its owner's alone: anyone else (any account, anonymous, a
    racer or not) is refused ``race_in_play``; spectators watch it through
    :meth:`Games.spectate`, which shows only what every racer has seen."""
    if viewer != owner and race_running(db, race_id):
        raise RaceInPlay()


def refusal(seal: Seal) -> DealSealed:
    """The ``403 deal_sealed`` for what a seal withholds, naming when it opens."""
    return DealSealed(seal.message, None if seal.until is None else seal.until.isoformat())


@dataclass(eq=False)
class Sealer:
    """Decides the seal of deals, with the server's deal key (the deal of the day), the UTC
    date and the time. One per process (app/bootstrap.py), shared by every service that shows
    or hides a deal, so that all of them agree on when a seal lifts; tests set its clocks."""

    deal_key: bytes
    today: Callable[[], date] = daily.today
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def of(
        self, db: Session | Connection, game: str, deal: int, *, besides: str | None = None
    ) -> Seal | None:
        """The seal on deal ``(game, deal)``, if any; ``besides``: a game whose own end is
        being written, not counted as a rated game still in play."""
        racing = select(Race.id).where(Race.game == game, Race.deal == deal, Race.status == RUNNING)
        if db.execute(racing.limit(1)).first() is not None:
            return Seal(SealKind.RACE, None)
        rated = select(Game.id).where(
            Game.game == game,
            Game.deal == deal,
            Game.rated.is_(True),
            Game.status == Status.PLAYING,
        )
        if besides is not None:
            rated = rated.where(Game.id != besides)
        if db.execute(rated.limit(1)).first() is not None:
            return Seal(SealKind.RATED, None)
        own = self.own_deal(db, game, deal)
        if own is not None:
            return own
        day = self.today()
        if daily.is_daily(game, deal, day, self.deal_key):
            return Seal(SealKind.DAILY, end_of_day(day))
        return None

    def own_deal(self, db: Session | Connection, game: str, deal: int) -> Seal | None:
        """The seal of a deal of someone's own (a challenge's or an event's), while it holds."""
        claim = db.execute(
            select(CompetitionDeal.kind, CompetitionDeal.sealed_until).where(
                CompetitionDeal.game == game, CompetitionDeal.deal == deal
            )
        ).first()
        if claim is None:
            return None
        kind, until = claim
        until = until if until.tzinfo is not None else until.replace(tzinfo=UTC)
        if until <= self.clock():
            return None
        return Seal(SealKind(kind), until)

    def refuse_start(self, db: Session | Connection, game: str, deal: int) -> None:
        """Nobody may start a game of a deal of someone else's own while it is sealed."""
        seal = self.own_deal(db, game, deal)
        if seal is not None:
            assert seal.until is not None
            raise DealSealed(
                "This deal was dealt to one player in a competition that is still open: "
                "nobody else may play it until %(until)s UTC.",
                seal.until.isoformat(),
                until=f"{seal.until:%Y-%m-%d %H:%M}",
            )

    def of_many(
        self, db: Session | Connection, deals: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], Seal | None]:
        """The seal of each of several deals (lists are short: one look-up each)."""
        return {key: self.of(db, *key) for key in set(deals)}
