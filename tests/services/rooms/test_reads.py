"""What is read of the rooms (app/services/rooms/reads.py): a room's events after a cursor, the
pruning of old events, the rooms live now, who is playing now (cached), and race results."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Game, Race
from app.services.games import Games
from app.services.rooms import events as race_events
from app.services.rooms.reads import RoomReads
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import PLAYING_CACHE_S, PLAYING_WINDOW_S
from tests.services.rooms.conftest import COUNTDOWN_S, Clock

Player = Callable[[str], str]


def write_events(sessions: sessionmaker[Session], room: str, clock: Clock, count: int) -> list[int]:
    with sessions.begin() as db:
        return [
            race_events.record(db, room, "room", {"n": n}, clock.advance(1)) for n in range(count)
        ]


def test_events_after_a_cursor_in_order_of_that_room_only(
    rooms: Rooms, sessions: sessionmaker[Session], clock: Clock
) -> None:
    mine = write_events(sessions, "AAAAAA", clock, 4)
    write_events(sessions, "BBBBBB", clock, 2)
    after = rooms.events_after("AAAAAA", mine[0])
    assert [e.id for e in after] == mine[1:]
    assert {(e.room, e.kind) for e in after} == {("AAAAAA", "room")}
    assert [e.id for e in rooms.events_after("AAAAAA", 0, limit=2)] == mine[:2]
    assert rooms.events_after("AAAAAA", mine[-1]) == []
    assert rooms.last_event_id("AAAAAA") == mine[-1]
    assert rooms.last_event_id("CCCCCC") == 0


def test_prune_deletes_only_events_before_the_time_and_at_most_a_batch(
    rooms: Rooms, sessions: sessionmaker[Session], clock: Clock
) -> None:
    old = write_events(sessions, "AAAAAA", clock, 5)
    cutoff = clock.advance(10)
    new = write_events(sessions, "AAAAAA", clock, 2)
    assert rooms.prune_events(cutoff, most=3) == 3
    assert [e.id for e in rooms.events_after("AAAAAA", 0)] == old[3:] + new
    assert rooms.prune_events(cutoff) == 2
    assert rooms.prune_events(cutoff) == 0
    assert [e.id for e in rooms.events_after("AAAAAA", 0)] == new


def test_live_lists_rooms_not_closed_latest_active_first_with_their_players(
    rooms: Rooms, player: Player, clock: Clock
) -> None:
    ann, bob, cyd = player("ann"), player("bob"), player("cyd")
    first = rooms.create(ann, "corners").code
    clock.advance(1)
    second = rooms.create(bob, "quadrangle").code
    clock.advance(1)
    rooms.join(first, cyd)  # the latest active
    gone = rooms.create(cyd, "corners").code
    rooms.leave(gone, cyd)
    live = rooms.live()
    assert [(r.code, r.game, r.status, r.players) for r in live] == [
        (first, "corners", "open", 2),
        (second, "quadrangle", "open", 1),
    ]
    assert [r.code for r in rooms.live(limit=1)] == [first]


def test_playing_now_counts_players_who_moved_lately_and_is_cached(
    sessions: sessionmaker[Session], games: Games, player: Player, clock: Clock
) -> None:
    reads = RoomReads(sessions, games, clock=clock)
    ann, bob = player("ann"), player("bob")
    games.start(ann, "corners", 1)
    games.start(ann, "corners", 2)  # one player, two games: counted once
    assert reads.playing_now() == {"corners": 1}
    games.start(bob, "quadrangle", 1)
    assert reads.playing_now() == {"corners": 1}  # read a moment ago: the cached counts
    clock.advance(PLAYING_CACHE_S)
    assert reads.playing_now() == {"corners": 1, "quadrangle": 1}
    clock.advance(PLAYING_WINDOW_S)
    assert reads.playing_now() == {}  # nobody moved within the window


def test_results_give_each_finished_race_with_the_players_place(
    rooms: Rooms, games: Games, player: Player, sessions: sessionmaker[Session], clock: Clock
) -> None:
    ann, bob = player("ann"), player("bob")
    code = rooms.create(ann, "corners").code
    rooms.join(code, bob)
    rooms.start(code, ann)
    assert rooms.results(ann) == []  # the race is still on
    clock.advance(COUNTDOWN_S)
    with sessions() as db:
        raced = db.scalars(select(Game).where(Game.race_id.is_not(None)))
        mine = {g.player_id: g.id for g in raced}
        deal = db.scalar(select(func.max(Race.deal)))
    view = games.get(mine[ann], ann)
    aside = next(m for m in view.legal_moves if not m.target.startswith("f"))
    games.move(mine[ann], ann, aside, view.record.version)
    games.resign(mine[bob], bob)
    games.resign(mine[ann], ann)
    results = {pid: rooms.results(pid) for pid in (ann, bob)}
    assert [(r.room, r.number, r.game, r.deal, r.racers, r.status) for r in results[ann]] == [
        (code, 1, "corners", deal, 2, "lost")
    ]
    assert results[ann][0].game_id == mine[ann] and results[bob][0].game_id == mine[bob]
    # Both lost with the same cards on the foundations: the fewer moves come first.
    assert (results[bob][0].place, results[ann][0].place) == (1, 2)
    assert results[ann][0].rating_before is None  # a casual race
    assert rooms.results_of("ANN") == results[ann]
    assert rooms.results_of("nobody") == []


def test_event_ids_keep_growing_after_a_prune_of_every_event(
    rooms: Rooms, sessions: sessionmaker[Session], clock: Clock
) -> None:
    """A client resumes after its Last-Event-ID, and the broker drops ids it delivered lately:
    an id handed out again after a prune would be missed by both."""
    before = write_events(sessions, "AAAAAA", clock, 3)
    rooms.prune_events(clock.advance(rooms.limits.event_retention_s))
    assert [e.id for e in rooms.events_after("AAAAAA", 0)] == before[-1:]  # the newest stays
    after = write_events(sessions, "AAAAAA", clock, 1)
    assert after[0] > before[-1]
