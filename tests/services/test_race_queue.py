"""The rated race queue (app/services/race_queue.py): when a race forms, whom it takes and whom
it keeps apart (one address, one browser session, one private room in the last day)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Race, RoomMember
from app.db.move_store import MoveStore
from app.engine import DEVELOPMENT_KEY
from app.services.errors import InvalidRequest
from app.services.games import Games
from app.services.players import create_player
from app.services.race_queue import MAX_RACERS, RaceQueue
from app.services.rooms import events as race_events
from app.services.rooms.rooms import Rooms
from app.services.seal import Sealer
from tests.migrated import empty_tables, sqlite_sessions
from tests.services.rooms.conftest import Clock, Published

WAIT_S = 10.0


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "race_queue") as sessions:
        yield sessions


@pytest.fixture()
def clock(sessions: sessionmaker[Session]) -> Clock:
    empty_tables(sessions)
    race_events._ROOMS.clear()  # race ids come again in an emptied SQLite database
    return Clock()


@pytest.fixture()
def queue(sessions: sessionmaker[Session], clock: Clock) -> Iterator[RaceQueue]:
    store = MoveStore.open(sessions.kw["bind"])
    sealer = Sealer(DEVELOPMENT_KEY, today=clock.today, clock=clock)
    games = Games(sessions, DEVELOPMENT_KEY, store=store, stamps=clock, sealer=sealer)
    games._rng = random.Random(7)  # type: ignore[assignment]
    rooms = Rooms(sessions, games, publish=Published(), clock=clock)
    yield RaceQueue(sessions, rooms, WAIT_S, clock)
    store.close()


def players(sessions: sessionmaker[Session], count: int) -> list[str]:
    with sessions.begin() as db:
        return [create_player(db, f"racer{n}")[0].id for n in range(count)]


def join(queue: RaceQueue, pid: str, *, address: str | None = None, session: str | None = None,
         slug: str = "corners") -> None:  # fmt: skip
    queue.join(pid, slug, address or f"addr-{pid}", session or f"session-{pid}")
    queue.clock.at += timedelta(milliseconds=1)  # type: ignore[attr-defined]  # in order


def test_a_race_forms_once_the_first_has_waited_long_enough(
    queue: RaceQueue, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob = players(sessions, 2)
    join(queue, ann)
    alone = queue.state(ann)
    assert (alone.queued, alone.game, alone.waiting, alone.room) == (True, "corners", 1, None)
    join(queue, bob)
    assert queue.state(bob).room is None  # not yet due
    clock.advance(WAIT_S)
    formed = queue.state(ann)  # asking forms it
    assert not formed.queued and formed.room is not None and formed.room.race is not None
    assert formed.room.race.rated and {p["id"] for p in formed.room.players} == {ann, bob}
    assert queue.state(bob).room == queue.rooms.get(formed.room.code)
    assert queue.state(bob).waiting == 0


def test_a_full_race_forms_at_once(queue: RaceQueue, sessions: sessionmaker[Session]) -> None:
    ids = players(sessions, MAX_RACERS + 1)
    for pid in ids:
        join(queue, pid)
    states = [queue.state(pid, form=False) for pid in ids]
    codes = {s.room.code for s in states if s.room is not None}
    assert len(codes) == 1 and len(queue.rooms.get(codes.pop()).players) == MAX_RACERS
    last = queue.state(ids[-1], form=False)
    assert last.queued and last.room is None  # the one who queued last waits for the next


def test_one_address_or_one_session_never_races_itself(
    queue: RaceQueue, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, twin, bob = players(sessions, 3)
    join(queue, ann, address="10.0.0.1", session="browser-a")
    join(queue, twin, address="10.0.0.1", session="browser-b")  # the same address
    clock.advance(WAIT_S)
    assert queue.form("corners") is None
    queue.leave(twin)
    join(queue, twin, address="10.0.0.2", session="browser-a")  # the same browser
    assert queue.form("corners") is None
    queue.leave(twin)
    join(queue, bob)  # joining forms the race: the wait is over
    room = queue.state(ann, form=False).room
    assert room is not None and {p["id"] for p in room.players} == {ann, bob}


def test_one_who_may_race_nobody_waiting_does_not_hold_the_others_up(
    queue: RaceQueue, sessions: sessionmaker[Session], clock: Clock
) -> None:
    # ann shares an address with bob and a browser with cyd; bob and cyd may race each other.
    ann, bob, cyd = players(sessions, 3)
    join(queue, ann, address="10.0.0.1", session="browser-a")
    join(queue, bob, address="10.0.0.1", session="browser-b")
    join(queue, cyd, address="10.0.0.3", session="browser-a")
    clock.advance(WAIT_S)
    code = queue.form("corners")
    assert code is not None
    room = queue.state(bob, form=False).room
    assert room is not None and room.code == code
    assert {p["id"] for p in room.players} == {bob, cyd}
    alone = queue.state(ann, form=False)
    assert alone.queued and alone.room is None  # waits for the next stranger


def test_one_private_rooms_players_are_kept_apart_for_a_day(
    queue: RaceQueue, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob, cyd, dot = players(sessions, 4)
    private = queue.rooms.create(ann, "corners").code
    queue.rooms.join(private, bob)
    queue.rooms.start(private, ann)  # ann and bob raced privately
    queue.rooms.create(cyd, "corners")  # cyd's own private room: nobody to be kept from
    with sessions() as db:
        apart = RaceQueue.kept_apart(db, [ann, bob, cyd, dot], clock())
    assert apart == {frozenset((ann, bob))}
    queue.rooms.leave(private, ann)
    queue.rooms.leave(private, bob)
    with sessions() as db:  # no longer members; their race started within the day
        assert RaceQueue.kept_apart(db, [ann, bob], clock()) == {frozenset((ann, bob))}
        later = clock() + timedelta(days=1, seconds=queue.rooms.limits.countdown_s + 1)
        assert RaceQueue.kept_apart(db, [ann, bob], later) == set()


def test_form_due_forms_every_game_and_leaves_the_rest_queued(
    queue: RaceQueue, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ids = players(sessions, 5)
    for pid in ids[:2]:
        join(queue, pid, slug="corners")
    for pid in ids[2:]:
        join(queue, pid, slug="quadrangle")
    assert queue.form_due() == []
    clock.advance(WAIT_S)
    codes = queue.form_due()
    assert sorted(queue.rooms.get(c).game for c in codes) == ["corners", "quadrangle"]
    with sessions() as db:
        assert db.scalar(select(Race.id).where(Race.rated.is_(False))) is None
        members = db.scalars(select(RoomMember.player_id)).all()
    assert sorted(members) == sorted(ids)


def test_joining_again_moves_the_player_and_leaving_forgets_them(
    queue: RaceQueue, sessions: sessionmaker[Session]
) -> None:
    (ann,) = players(sessions, 1)
    join(queue, ann, slug="corners")
    join(queue, ann, slug="quadrangle")
    assert queue.state(ann).game == "quadrangle" and queue.state(ann).waiting == 1
    queue.leave(ann)
    gone = queue.state(ann)
    assert (gone.queued, gone.game, gone.waiting, gone.room) == (False, None, 0, None)


def test_an_unknown_game_is_refused(queue: RaceQueue, sessions: sessionmaker[Session]) -> None:
    (ann,) = players(sessions, 1)
    with pytest.raises(InvalidRequest):
        queue.join(ann, "no-such-game", "addr", "session")
    assert not queue.state(ann).queued
