"""The background race former (contract v3, Competition: "the server forms a race of 2–8
queued players after a short wait"): races form with nobody polling, and two formers — two
workers or two instances over one database — never put one player into two races."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.db.models import QueuedRacer, Room, RoomMember
from app.main import every
from app.services.race_queue import MAX_RACERS, MIN_RACERS, RaceQueue
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import RoomView
from tests.aio import run
from tests.waiting import wait_until
from tests.web.competition_support import GAME, Clock

WAIT_S = 10.0


@pytest.fixture()
def empty_queue(app: FastAPI) -> Iterator[None]:
    """Other tests' queued players are not ours, and ours must not be left for theirs."""

    def clear() -> None:
        with app.state.services.sessions.begin() as db:
            db.execute(delete(QueuedRacer))

    clear()
    yield
    clear()


def queued(app: FastAPI, at: datetime, count: int) -> list[str]:
    """``count`` new players queued for GAME by ``at``, each from an address and a session of
    their own. Written as ``RaceQueue.join`` writes them, without its attempt to form a race
    (eight joins would form one at once): only the formers under test form races here."""
    ids: list[str] = []
    with app.state.services.sessions.begin() as db:
        for n in range(1, count + 1):
            player, _token = app.state.services.players.create_api_player(None)
            db.add(
                QueuedRacer(
                    player_id=player.id,
                    game=GAME,
                    address=f"198.18.{n}.{n}",
                    session_key=f"api:{player.id}",
                    joined_at=at
                    - timedelta(milliseconds=count - n),  # in order, the last at ``at``
                    room_code=None,
                )
            )
            ids.append(player.id)
    return ids


def rooms_of(app: FastAPI, ids: list[str]) -> dict[str, list[str]]:
    """The rated rooms each of ``ids`` is a member of."""
    with app.state.services.sessions() as db:
        rows = db.execute(
            select(RoomMember.player_id, RoomMember.room_code)
            .join(Room, Room.code == RoomMember.room_code)
            .where(RoomMember.player_id.in_(ids), Room.rated.is_(True))
        ).all()
    found: dict[str, list[str]] = {pid: [] for pid in ids}
    for pid, code in rows:
        found[pid].append(code)
    return found


def test_queued_players_get_a_race_with_nobody_polling(app: FastAPI, empty_queue: None) -> None:
    clock = Clock(datetime(2031, 5, 4, 12, 0, tzinfo=UTC))
    race_queue = RaceQueue(app.state.services.sessions, app.state.services.rooms, WAIT_S, clock)
    one, two = queued(app, clock.at, 2)
    formed: list[str] = []

    async def drive() -> None:
        """Two rounds of the former, the clock moved between them by its injected pause."""
        rounds_done = 0
        finished = asyncio.Event()

        async def pause(every_s: float) -> None:
            nonlocal rounds_done
            assert every_s == 2.0
            if rounds_done == 1:  # the first round came before the wait was over
                assert formed == []
                assert_no_room(race_queue, [one, two])
                clock.at += timedelta(seconds=WAIT_S)
            elif rounds_done == 2:
                finished.set()
                await asyncio.Event().wait()  # until cancelled
            rounds_done += 1

        former = asyncio.create_task(
            every(2.0, lambda: formed.extend(race_queue.form_due()), "forming races", pause)
        )
        await asyncio.wait_for(finished.wait(), 30)
        former.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await former

    run(drive())
    # Nobody asked how the queue stood (state(form=False) only reads): the former formed it.
    assert len(formed) == 1
    rooms = {pid: race_queue.state(pid, form=False).room for pid in (one, two)}
    room = rooms[one]
    other = rooms[two]
    assert room is not None and room.code == formed[0]
    assert other is not None and other.code == room.code
    assert room.race is not None and room.race.rated is True
    assert rooms_of(app, [one, two]) == {one: [room.code], two: [room.code]}


def assert_no_room(race_queue: RaceQueue, ids: list[str]) -> None:
    for pid in ids:
        state = race_queue.state(pid, form=False)
        assert state.queued and state.room is None


def test_the_app_runs_the_former(
    app: FastAPI, empty_queue: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's lifespan starts the former: queued players who never poll get their race."""
    race_queue: RaceQueue = app.state.services.race_queue
    one, two = queued(app, datetime.now(UTC), 2)
    assert_no_room(race_queue, [one, two])
    monkeypatch.setattr(race_queue, "wait_s", 0.0)
    monkeypatch.setattr(app.state.settings, "race_queue_form_s", 0.01)
    with TestClient(app):  # runs the lifespan; no request is made
        wait_until(lambda: race_queue.state(one, form=False).room is not None, "a race formed")
    room = race_queue.state(one, form=False).room
    assert room is not None
    assert rooms_of(app, [one, two]) == {one: [room.code], two: [room.code]}


@dataclass
class HeldRooms:
    """The rooms service, except that forming a race stops, its queue rows locked, until the
    test lets it go on: a second former runs in that moment."""

    rooms: Rooms
    inside: threading.Event = field(default_factory=threading.Event)
    go_on: threading.Event = field(default_factory=threading.Event)

    def form_rated(
        self, db: Session, slug: str, ids: list[str], stamp: datetime
    ) -> tuple[str, list[int]]:
        self.inside.set()
        assert self.go_on.wait(30), "the test never let the first former go on"
        return self.rooms.form_rated(db, slug, ids, stamp)

    def publish(self, events: list[int]) -> None:
        self.rooms.publish(events)

    def get(self, code: str) -> RoomView | None:
        return self.rooms.get(code)


def test_a_second_former_skips_the_players_the_first_is_forming(
    app: FastAPI, backend: str, empty_queue: None
) -> None:
    if backend != "postgres":
        pytest.skip("SQLite serializes write transactions: a second former waits its turn")
    services = app.state.services
    clock = Clock(datetime(2031, 5, 4, 12, 0, tzinfo=UTC))
    held = HeldRooms(services.rooms)
    first = RaceQueue(services.sessions, cast(Rooms, held), WAIT_S, clock)
    second = RaceQueue(services.sessions, services.rooms, WAIT_S, clock)
    ids = queued(app, clock.at, 10)  # eight make a full race, two are left
    clock.at += timedelta(seconds=WAIT_S)
    with ThreadPoolExecutor(1) as pool:
        forming = pool.submit(first.form_due)
        assert held.inside.wait(30)
        # The first former holds all ten rows in its open transaction: the second skips them
        # rather than waiting, and forms nothing.
        assert second.form_due() == []
        held.go_on.set()
        # Then it goes on with the two it left over.
        code, other = forming.result(30)
    assert second.form_due() == []
    membership = rooms_of(app, ids)
    assert sorted(len(codes) for codes in membership.values()) == [1] * 10
    assert [pid for pid in ids if membership[pid] == [code]] == ids[:8]
    assert [pid for pid in ids if membership[pid] == [other]] == ids[8:]
    with services.sessions() as db:
        unmatched = db.scalar(select(func.count()).where(QueuedRacer.room_code.is_(None)))
    assert unmatched == 0


def test_two_formers_at_once_never_put_a_player_in_two_races(
    app: FastAPI, empty_queue: None
) -> None:
    services = app.state.services
    clock = Clock(datetime(2031, 5, 4, 12, 0, tzinfo=UTC))
    formers = [RaceQueue(services.sessions, services.rooms, WAIT_S, clock) for _ in range(2)]
    ids = queued(app, clock.at, 21)
    clock.at += timedelta(seconds=WAIT_S)
    start = threading.Barrier(2)

    def former(race_queue: RaceQueue) -> list[str]:
        start.wait(30)
        codes: list[str] = []
        for _ in range(5):
            codes += race_queue.form_due()
        return codes

    with ThreadPoolExecutor(2) as pool:
        results = [f.result(60) for f in [pool.submit(former, q) for q in formers]]
    codes = results[0] + results[1]
    assert len(codes) == len(set(codes))  # no room formed twice
    membership = rooms_of(app, ids)
    # Nobody is in two races. How the two formers split the queue depends on which rows each
    # locked first (SKIP LOCKED): 8 + 8 + 5, or 8 + 4 + 8 with one player left to wait for the
    # next stranger, or another split (a run on a machine kept busy by a CPU hog did not get
    # 8 + 8 + 5: some player was not in exactly one room). Whatever the split, every room is a
    # race of two to eight, and fewer than two players are left over (two would make a race).
    assert all(len(found) <= 1 for found in membership.values()), membership
    sizes = Counter(found[0] for found in membership.values() if found)
    assert set(sizes) == set(codes), (sizes, codes)
    assert all(MIN_RACERS <= n <= MAX_RACERS for n in sizes.values()), sizes
    assert sum(1 for found in membership.values() if not found) < MIN_RACERS, membership
    with services.sessions() as db:
        taken = dict(db.execute(select(QueuedRacer.player_id, QueuedRacer.room_code)).all())
    assert taken == {pid: (found[0] if found else None) for pid, found in membership.items()}
