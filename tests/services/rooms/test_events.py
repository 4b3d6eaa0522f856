"""Events of rooms and races (app/services/rooms/events.py): the order of a race's standings
(winners by finishing time, then the rest by cards on foundations, more first, then by moves,
fewer first), event rows, a race as its events show it, and the events a race's games write."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Event, Race, RaceRating, RatingChange
from app.services.games import Games
from app.services.rooms.events import Racer, race_view, rank, record, room_of
from app.services.rooms.rooms import Rooms
from app.services.statuses import RaceStatus
from tests.services.rooms.conftest import COUNTDOWN_S, Clock

START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def test_winners_by_time_then_cards_then_moves() -> None:
    racers = [
        Racer("lost-many-cards", "g1", "lost", 80, 40, at(50)),
        Racer("slow-winner", "g2", "won", 120, 52, at(300)),
        Racer("playing-few-cards", "g3", "playing", 30, 10, None),
        Racer("fast-winner", "g4", "won", 150, 52, at(200)),
        Racer("lost-many-cards-fewer-moves", "g5", "lost", 60, 40, at(70)),
    ]
    standings = rank(racers, START)
    assert [s.player for s in standings] == [
        "fast-winner",
        "slow-winner",
        "lost-many-cards-fewer-moves",
        "lost-many-cards",
        "playing-few-cards",
    ]
    assert [s.place for s in standings] == [1, 2, 3, 4, 5]
    assert [s.time_ms for s in standings] == [200_000, 300_000, None, None, None]


def test_a_tie_is_broken_by_name_so_the_order_is_stable() -> None:
    racers = [Racer("b", "g1", "lost", 10, 5, at(1)), Racer("a", "g2", "lost", 10, 5, at(2))]
    assert [s.player for s in rank(racers, START)] == ["a", "b"]
    assert [s.player for s in rank(list(reversed(racers)), START)] == ["a", "b"]


# -- event rows, and the events of a race's games as they are played --------------------------


def room_events(sessions: sessionmaker[Session], code: str) -> list[tuple[str, dict[str, Any]]]:
    with sessions() as db:
        rows = db.execute(
            select(Event.kind, Event.data).where(Event.room_code == code).order_by(Event.id)
        ).all()
    return [(kind, json.loads(data)) for kind, data in rows]


def test_record_writes_compact_json_and_returns_growing_ids(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    with sessions.begin() as db:
        first = record(db, "ABCDEF", "room", {"type": "joined", "players": ["a"]}, clock())
        second = record(db, "ABCDEF", "progress", {"moves": 1}, clock())
        with pytest.raises(AssertionError):
            record(db, "ABCDEF", "cards", {}, clock())  # not a room's kind
    assert second > first
    with sessions() as db:
        data = db.scalar(select(Event.data).where(Event.id == first))
    assert data == '{"type":"joined","players":["a"]}'


def test_race_view_hides_the_deal_while_the_race_runs() -> None:
    racers = [
        Racer("bob", "g2", "playing", 3, 1, None),
        Racer("ann", "g1", "won", 40, 52, at(90)),
    ]
    running = SimpleNamespace(
        number=2, game="corners", deal=77, starts_at=START, status="running", finished_at=None,
        rated=0,
    )  # fmt: skip
    view = race_view(running, racers)
    assert view.deal is None and view.status is RaceStatus.RUNNING and view.rated is False
    assert list(view.games.items()) == [("ann", "g1"), ("bob", "g2")]  # by name
    data = view.event_data()
    assert json.loads(json.dumps(data)) == data  # what an event carries is plain JSON
    assert data["starts_at"] == START.isoformat() and data["finished_at"] is None
    assert [s["player"] for s in data["standings"]] == ["ann", "bob"]
    assert data["standings"][0]["time_ms"] == 90_000
    finished = SimpleNamespace(**{**vars(running), "status": "finished", "finished_at": at(100)})
    assert race_view(finished, racers).event_data()["deal"] == 77


def start_race(rooms: Rooms, ann: str, bob: str, clock: Clock) -> tuple[str, dict[str, str]]:
    code = rooms.create(ann, "corners").code
    rooms.join(code, bob)
    race = rooms.start(code, ann).race
    assert race is not None
    clock.advance(COUNTDOWN_S)
    return code, {name: race.games[name] for name in ("ann", "bob")}


def test_a_race_game_writes_progress_then_standings_then_the_finish(
    rooms: Rooms,
    games: Games,
    player: Callable[[str], str],
    sessions: sessionmaker[Session],
    clock: Clock,
) -> None:
    ann, bob = player("ann"), player("bob")
    code, ids = start_race(rooms, ann, bob, clock)
    before = len(room_events(sessions, code))
    view = games.get(ids["ann"], ann)
    games.move(ids["ann"], ann, view.legal_moves[0], view.record.version)
    games.resign(ids["bob"], bob)
    clock.advance(5)
    games.resign(ids["ann"], ann)
    written = room_events(sessions, code)[before:]
    assert [(k, d.get("type", d.get("status"))) for k, d in written] == [
        ("progress", "playing"),
        ("progress", "lost"),
        ("race", "standings"),
        ("progress", "lost"),
        ("race", "finished"),
    ]
    progress = written[0][1]
    assert set(progress) == {"player", "game", "moves", "foundation_cards", "status"}
    assert (progress["player"], progress["game"], progress["moves"]) == ("ann", ids["ann"], 1)
    standings = written[2][1]["race"]
    assert standings["status"] == "running" and standings["deal"] is None
    end = written[4][1]["race"]
    assert end["status"] == "finished" and end["deal"] is not None
    assert end["finished_at"] == clock.at.isoformat()
    room = rooms.get(code)
    assert room.status == "open" and not room.racing(ann)


def test_the_end_of_a_rated_race_rates_its_racers(
    rooms: Rooms,
    games: Games,
    player: Callable[[str], str],
    sessions: sessionmaker[Session],
    clock: Clock,
) -> None:
    ann, bob = player("ann"), player("bob")
    with sessions.begin() as db:
        code, _ = rooms.form_rated(db, "corners", [ann, bob], clock())
    race = rooms.get(code).race
    assert race is not None
    clock.advance(COUNTDOWN_S)
    games.resign(race.games["bob"], bob)
    with sessions() as db:
        assert db.scalars(select(RatingChange)).all() == []  # not over yet
    games.resign(race.games["ann"], ann)
    with sessions() as db:
        changes = {c.player_id: c for c in db.scalars(select(RatingChange))}
        rated = {r.player_id: r.races for r in db.scalars(select(RaceRating))}
    assert set(changes) == {ann, bob} and rated == {ann: 1, bob: 1}
    # Both forfeited (resigned with moves left): they share the place after everyone else.
    assert {(c.place, c.forfeit) for c in changes.values()} == {(1, True)}


def test_room_of_a_race_is_read_once_then_remembered(
    rooms: Rooms, player: Callable[[str], str], sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob = player("ann"), player("bob")
    code, _ = start_race(rooms, ann, bob, clock)
    with sessions() as db:
        race_id = db.scalar(select(Race.id).where(Race.room_code == code))
    assert race_id is not None
    bind = sessions.kw["bind"]
    statements: list[str] = []

    def seen(*args: Any) -> None:
        statements.append(args[2])

    with sessions() as db:
        assert room_of(db, race_id) == code  # the cache may be warm already: moves read it
        event.listen(bind, "before_cursor_execute", seen)
        try:
            assert room_of(db, race_id) == code
        finally:
            event.remove(bind, "before_cursor_execute", seen)
    assert statements == []
