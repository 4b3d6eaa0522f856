"""Sealed deals (contract v3): the one place that decides what a competition keeps hidden.

One person may hold any number of accounts and anonymous browsers. So while a competition on a
deal is open, the deal is **sealed** for everyone, its players included:

| Competition | sealed until |
| --- | --- |
| a rated game in play | the game ends |
| a running race | every racer has finished |
| the deal of the day | the UTC day ends |

While a deal is sealed no game of it shows a card that was never face up in that game (a
finished game is shown as if still in play), and no replay, move log, solution, verdict or
record of it is given. Rated and race games also hide their deal **number** until they end, so
that a second account cannot deal the same cards (:func:`number_hidden`); the deal of the day's
number is public, its cards are not.

Every reader of games, deals, lists and events asks here; a leak found later is mended here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, exists, select
from sqlalchemy.orm import Session

from app.db.models import Game, Race
from app.engine import Status
from app.services import daily
from app.services.errors import DealSealed, RaceInPlay

RUNNING = "running"  # a race's status while it is on


class SealKind(StrEnum):
    RATED = "rated"
    RACE = "race"
    DAILY = "daily"


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


@dataclass(frozen=True)
class Sealer:
    """Decides the seal of deals, with the server's deal key (the deal of the day) and the
    UTC date (a clock the tests can set)."""

    deal_key: bytes
    today: Callable[[], date] = daily.today

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
        day = self.today()
        if daily.is_daily(game, deal, day, self.deal_key):
            return Seal(SealKind.DAILY, end_of_day(day))
        return None

    def of_many(
        self, db: Session | Connection, deals: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], Seal | None]:
        """The seal of each of several deals (lists are short: one look-up each)."""
        return {key: self.of(db, *key) for key in set(deals)}
