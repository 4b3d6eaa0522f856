"""The rooms' use cases (app/services/rooms/rooms.py): create, join, leave, start a race, form a
rated one, and the sweep that forfeits silent racers and closes idle rooms."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Event, Game, Race
from app.engine import Status
from app.services.errors import (
    InvalidRequest,
    NotAMember,
    NotFound,
    RaceRunning,
    RoomClosed,
    RoomFull,
    TooManyRooms,
)
from app.services.games import Games
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import CODE_RE
from tests.services.rooms.conftest import COUNTDOWN_S, Clock, Published

Player = Callable[[str], str]


def events(sessions: sessionmaker[Session], code: str) -> list[dict[str, object]]:
    with sessions() as db:
        rows = db.scalars(select(Event.data).where(Event.room_code == code).order_by(Event.id))
        return [json.loads(row) for row in rows]


def race_games(sessions: sessionmaker[Session], code: str) -> list[Game]:
    with sessions() as db:
        return list(
            db.scalars(
                select(Game).join(Race, Race.id == Game.race_id).where(Race.room_code == code)
            )
        )


def test_create_makes_an_open_room_with_its_creator_and_publishes_the_event(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session], published: Published
) -> None:
    ann = player("ann")
    room = rooms.create(ann, "corners")
    assert CODE_RE.fullmatch(room.code)
    assert (room.game, room.status, room.created_by) == ("corners", "open", ann)
    assert room.players == [{"id": ann, "name": "ann"}]
    assert room.race is None and room.url == f"/rooms/{room.code}"
    assert events(sessions, room.code) == [{"type": "created", "player": "ann", "players": ["ann"]}]
    assert len(published.ids) == 1


def test_create_refuses_an_unknown_game(rooms: Rooms, player: Player) -> None:
    with pytest.raises(InvalidRequest):
        rooms.create(player("ann"), "no-such-game")


def test_join_takes_the_code_as_typed_and_twice_is_once(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    clock.advance(1)  # members in the order they joined
    joined = rooms.join(f"  {code.lower()} ", bob)
    assert [p["name"] for p in joined.players] == ["ann", "bob"]
    again = rooms.join(code, bob)
    assert again.players == joined.players
    assert [e["type"] for e in events(sessions, code)] == ["created", "joined"]


def test_join_refusals(rooms: Rooms, player: Player) -> None:
    ann, bob, cyd, dot = player("ann"), player("bob"), player("cyd"), player("dot")
    code = rooms.create(ann, "corners").code
    with pytest.raises(NotFound):
        rooms.join("ZZZZZZ", bob)
    with pytest.raises(NotFound):
        rooms.join("not a code", bob)
    rooms.join(code, bob)
    rooms.join(code, cyd)
    with pytest.raises(RoomFull):  # max_members=3
        rooms.join(code, dot)


def test_a_player_is_in_a_limited_number_of_open_rooms(rooms: Rooms, player: Player) -> None:
    ann, bob = player("ann"), player("bob")
    rooms.create(ann, "corners")
    third = rooms.create(bob, "corners").code
    rooms.create(ann, "quadrangle")  # rooms_per_player=2
    with pytest.raises(TooManyRooms):
        rooms.create(ann, "corners")
    with pytest.raises(TooManyRooms):
        rooms.join(third, ann)


def test_the_last_one_to_leave_closes_the_room(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session]
) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    rooms.join(code, bob)
    assert rooms.leave(code, ann).status == "open"
    with pytest.raises(NotAMember):
        rooms.leave(code, ann)
    assert rooms.leave(code, bob).status == "closed"
    assert [e["type"] for e in events(sessions, code)][-3:] == ["left", "left", "closed"]
    with pytest.raises(RoomClosed):
        rooms.join(code, ann)
    with pytest.raises(RoomClosed):
        rooms.start(code, ann)


def test_start_deals_one_game_of_one_deal_to_each_member_after_a_countdown(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    rooms.join(code, bob)
    room = rooms.start(code, bob)
    assert room.status == "racing" and room.race is not None
    assert room.race.number == 1 and room.race.deal is None  # hidden while the race is on
    assert room.race.starts_at == clock.at + timedelta(seconds=COUNTDOWN_S)
    dealt = race_games(sessions, code)
    assert sorted(g.player_id for g in dealt) == sorted([ann, bob])
    assert len({g.deal for g in dealt}) == 1
    assert all(g.rated is False and g.status == Status.PLAYING for g in dealt)
    assert set(room.race.games) == {"ann", "bob"}
    started = events(sessions, code)[-1]
    assert started["type"] == "started"
    with pytest.raises(RaceRunning):
        rooms.start(code, ann)


def test_only_members_start_races(rooms: Rooms, player: Player) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    with pytest.raises(NotAMember):
        rooms.start(code, bob)


def test_a_rematch_is_race_two_on_a_new_deal(
    rooms: Rooms, games: Games, player: Player, sessions: sessionmaker[Session]
) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    rooms.join(code, bob)
    first = rooms.start(code, ann).race
    assert first is not None
    for game in race_games(sessions, code):
        games.resign(game.id, game.player_id)
    ended = rooms.get(code)
    assert ended.status == "open" and ended.race is not None
    assert ended.race.status == "finished" and ended.race.deal is not None  # shown once over
    second = rooms.start(code, ann).race
    assert second is not None and second.number == 2


def test_leaving_mid_race_forfeits_the_game(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session]
) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    rooms.join(code, bob)
    rooms.start(code, ann)
    room = rooms.leave(code, bob)
    status = {g.player_id: g.status for g in race_games(sessions, code)}
    assert status == {ann: Status.PLAYING, bob: Status.LOST}
    assert room.racing(ann) and not room.racing(bob)


def test_a_rated_room_is_formed_racing_and_takes_no_one_else(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob, cyd = player("ann"), player("bob"), player("cyd")
    with sessions.begin() as db:
        code, ids = rooms.form_rated(db, "corners", [ann, bob], clock())
    assert len(ids) == 1  # the race's start; published by the caller after its commit
    room = rooms.get(code)
    assert room.status == "racing" and room.race is not None and room.race.rated
    with pytest.raises(RoomClosed):
        rooms.join(code, cyd)
    assert rooms.join(code, ann).code == code  # a racer of it is a member already


def test_sweep_forfeits_silent_racers_and_closes_idle_rooms(
    rooms: Rooms, player: Player, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob, cyd = player("ann"), player("bob"), player("cyd")
    racing = rooms.create(ann, "corners").code
    rooms.join(racing, bob)
    rooms.start(racing, ann)
    idle = rooms.create(cyd, "corners").code
    clock.advance(rooms.limits.forfeit_s + COUNTDOWN_S + 1)
    rooms.sweep()
    assert {g.status for g in race_games(sessions, racing)} == {Status.LOST}
    assert rooms.get(racing).status == "open"  # the race ended; the room is idle from now
    assert rooms.get(idle).status == "open"  # idle for less than idle_s
    clock.advance(rooms.limits.idle_s + 1)
    rooms.sweep()
    assert rooms.get(idle).status == "closed" and rooms.get(racing).status == "closed"
    assert events(sessions, idle)[-1] == {"type": "closed", "player": None, "players": ["cyd"]}
