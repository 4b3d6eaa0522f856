"""The seal of deals (app/services/seal.py): which competition seals a deal and until when, what
a seal says and hides, deal numbers as lists show them, and reading a running race's game."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import insert, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import GAME, GameRow
from app.db.models import CompetitionDeal, Game, Race, Room
from app.engine import DEVELOPMENT_KEY, RULES_VERSION
from app.services.daily import daily_deal
from app.services.errors import DealSealed, RaceInPlay
from app.services.players import create_player
from app.services.seal import (
    Seal,
    Sealer,
    SealKind,
    check_race_read,
    end_of_day,
    number_hidden,
    number_secret,
    opened_to_all,
    race_running,
    refusal,
    shown_number,
    shown_race_deal,
)
from tests.migrated import sqlite_sessions

NOW = datetime(2026, 11, 23, 20, 30, tzinfo=UTC)
TODAY = NOW.date()
MIDNIGHT = datetime(2026, 11, 24, tzinfo=UTC)


# -- what a seal says ------------------------------------------------------------------------


def test_end_of_day_is_the_next_utc_midnight() -> None:
    assert end_of_day(date(2026, 12, 31)) == datetime(2027, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seal", "opens"),
    [
        (Seal(SealKind.RATED, None), "when the rated game on it ends"),
        (Seal(SealKind.RACE, None), "when the race on it ends"),
        (Seal(SealKind.DAILY, MIDNIGHT), "at 2026-11-24 00:00 UTC, when its day ends"),
        (
            Seal(SealKind.CHALLENGE, MIDNIGHT),
            "at 2026-11-24 00:00 UTC, when its day's challenge ends",
        ),
        (Seal(SealKind.EVENT, NOW), "at 2026-11-23 20:30 UTC, when the event ends"),
    ],
)
def test_a_seal_says_when_it_opens(seal: Seal, opens: str) -> None:
    assert seal.opens == opens
    assert seal.message.endswith(f"open {opens}.")


def test_only_the_deal_of_the_day_shows_its_number() -> None:
    assert [k for k in SealKind if not Seal(k, MIDNIGHT).hides_number] == [SealKind.DAILY]


def test_refusal_names_when_the_seal_lifts() -> None:
    timed = refusal(Seal(SealKind.DAILY, MIDNIGHT))
    assert isinstance(timed, DealSealed) and timed.code == "deal_sealed"
    assert timed.message == Seal(SealKind.DAILY, MIDNIGHT).message
    assert timed.details == {"opens_at": MIDNIGHT.isoformat()}
    untimed = refusal(Seal(SealKind.RACE, None))
    assert "when the race on it ends" in untimed.message and untimed.details == {}


@pytest.mark.parametrize(
    ("rated", "playing", "race_on", "hidden"),
    [
        (True, True, False, True),  # a rated game in play
        (True, False, False, False),  # a rated game over
        (False, True, False, False),  # a casual game: its owner chose the number
        (False, False, True, True),  # a race game, over, while the race is on
        (False, True, True, True),
    ],
)
def test_number_hidden(rated: bool, playing: bool, race_on: bool, hidden: bool) -> None:
    assert number_hidden(rated=rated, playing=playing, race_running=race_on) is hidden
    status = "playing" if playing else "lost"
    assert shown_number(7, rated=rated, status=status, race_on=race_on) == (None if hidden else 7)


def test_a_race_deal_is_shown_once_the_race_is_over() -> None:
    assert shown_race_deal(7, "running") is None
    assert shown_race_deal(7, "finished") == 7


def test_only_a_deal_of_ones_own_opens_to_all() -> None:
    assert opened_to_all("challenge") and opened_to_all("event")
    assert not opened_to_all(None)


# -- the seal of a deal, read from the database --------------------------------------------


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "seal") as sessions:
        yield sessions


@pytest.fixture(scope="module")
def owner(sessions: sessionmaker[Session]) -> str:
    with sessions.begin() as db:
        return create_player(db, "owner")[0].id


@pytest.fixture()
def sealer() -> Sealer:
    return Sealer(DEVELOPMENT_KEY, today=lambda: TODAY, clock=lambda: NOW)


_ids = iter(range(10**6))


def add_game(
    db: Session, owner: str, deal: int, *, rated: bool = False, status: str = "playing",
    race_id: int | None = None, slug: str = "corners",
) -> str:  # fmt: skip
    game_id = f"seal-game-{next(_ids)}"
    row = GameRow.dealt(
        game_id, owner, slug, deal, "{}", status, NOW, rules=RULES_VERSION, rated=rated,
        race_id=race_id,
    )  # fmt: skip
    db.execute(insert(GAME).values(**vars(row)))
    return game_id


def add_race(db: Session, owner: str, deal: int, status: str, code: str) -> int:
    db.add(Room(code=code, game="corners", created_by=owner, status="racing",
                created_at=NOW, active_at=NOW))  # fmt: skip
    db.flush()  # the room before its race
    race = Race(room_code=code, number=1, game="corners", deal=deal, starts_at=NOW,
                status=status, finished_at=None)  # fmt: skip
    db.add(race)
    db.flush()
    return race.id


def add_claim(db: Session, owner: str, deal: int, kind: str, until: datetime) -> None:
    db.add(CompetitionDeal(game="corners", deal=deal, kind=kind, player_id=owner,
                           sealed_until=until, created_at=NOW))  # fmt: skip


def test_an_unremarkable_deal_has_no_seal(sessions: sessionmaker[Session], sealer: Sealer) -> None:
    with sessions() as db:
        assert sealer.of(db, "corners", 1_000_001) is None


def test_a_running_race_seals_its_deal_until_it_ends(
    sessions: sessionmaker[Session], sealer: Sealer, owner: str
) -> None:
    with sessions.begin() as db:
        running = add_race(db, owner, 1_000_002, "running", "RACEAA")
        over = add_race(db, owner, 1_000_003, "finished", "RACEBB")
    with sessions() as db:
        assert sealer.of(db, "corners", 1_000_002) == Seal(SealKind.RACE, None)
        assert sealer.of(db, "quadrangle", 1_000_002) is None  # another game's deal
        assert sealer.of(db, "corners", 1_000_003) is None
        assert race_running(db, running) and not race_running(db, over)
        assert not race_running(db, None)


def test_a_rated_game_in_play_seals_its_deal_except_for_its_own_end(
    sessions: sessionmaker[Session], sealer: Sealer, owner: str
) -> None:
    with sessions.begin() as db:
        game_id = add_game(db, owner, 1_000_004, rated=True)
        add_game(db, owner, 1_000_005, rated=True, status="won")
        add_game(db, owner, 1_000_006, rated=False)
    with sessions() as db:
        assert sealer.of(db, "corners", 1_000_004) == Seal(SealKind.RATED, None)
        assert sealer.of(db, "corners", 1_000_004, besides=game_id) is None
        assert sealer.of(db, "corners", 1_000_005) is None
        assert sealer.of(db, "corners", 1_000_006) is None


def test_a_deal_of_ones_own_is_sealed_while_its_claim_holds(
    sessions: sessionmaker[Session], sealer: Sealer, owner: str
) -> None:
    with sessions.begin() as db:
        add_claim(db, owner, 1_000_007, "challenge", MIDNIGHT)
        add_claim(db, owner, 1_000_008, "event", NOW)  # ended just now
    with sessions() as db:
        assert sealer.of(db, "corners", 1_000_007) == Seal(SealKind.CHALLENGE, MIDNIGHT)
        assert sealer.of(db, "corners", 1_000_008) is None
        with pytest.raises(DealSealed) as refused:
            sealer.refuse_start(db, "corners", 1_000_007)
        assert refused.value.params == {"until": "2026-11-24 00:00"}
        assert refused.value.details == {"opens_at": MIDNIGHT.isoformat()}
        sealer.refuse_start(db, "corners", 1_000_008)  # open again: anyone may play it
        sealer.refuse_start(db, "corners", 1_000_009)


def test_the_deal_of_the_day_is_sealed_until_midnight(
    sessions: sessionmaker[Session], sealer: Sealer
) -> None:
    number = daily_deal("corners", TODAY, DEVELOPMENT_KEY)
    yesterday = daily_deal("corners", TODAY - timedelta(days=1), DEVELOPMENT_KEY)
    with sessions() as db:
        assert sealer.of(db, "corners", number) == Seal(SealKind.DAILY, MIDNIGHT)
        assert sealer.of(db, "corners", yesterday) is None
        seals = sealer.of_many(db, [("corners", number), ("corners", yesterday)] * 2)
    assert seals == {
        ("corners", number): Seal(SealKind.DAILY, MIDNIGHT),
        ("corners", yesterday): None,
    }


def test_a_running_race_game_is_its_owners_alone(
    sessions: sessionmaker[Session], owner: str
) -> None:
    with sessions.begin() as db:
        running = add_race(db, owner, 1_000_010, "running", "RACECC")
        over = add_race(db, owner, 1_000_011, "finished", "RACEDD")
    with sessions() as db:
        check_race_read(db, running, owner, owner)
        for viewer in ("someone-else", None):
            with pytest.raises(RaceInPlay):
                check_race_read(db, running, owner, viewer)
        check_race_read(db, over, owner, "someone-else")
        check_race_read(db, None, owner, None)


def test_number_secret_as_a_list_column(sessions: sessionmaker[Session], owner: str) -> None:
    with sessions.begin() as db:
        race = add_race(db, owner, 1_000_012, "running", "RACEEE")
        in_race = add_game(db, owner, 1_000_012, status="lost", race_id=race)
        add_claim(db, owner, 1_000_013, "event", MIDNIGHT)
        own = add_game(db, owner, 1_000_013, status="won")
        plain = add_game(db, owner, 1_000_014, status="won")
    with sessions() as db:
        secret: dict[str, object] = dict(
            db.execute(
                select(Game.id, number_secret(NOW)).where(Game.id.in_([in_race, own, plain]))
            ).all()
        )
        later = db.scalar(select(number_secret(MIDNIGHT)).where(Game.id == own))
    assert {k: bool(v) for k, v in secret.items()} == {in_race: True, own: True, plain: False}
    assert not later
