"""The live stream of a room over real HTTP (uvicorn), on SQLite (the in-process broker) and
PostgreSQL (LISTEN/NOTIFY): events in order with ids, replay with Last-Event-ID, each event
once, no card in any event, and a feed catching up page by page. (The broker's own rules, such
as a slow subscriber dropped rather than waited for, are in tests/db/test_broker.py.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.db.broker import EventRow, InProcessBroker
from tests.aio import run
from tests.web.live_support import Api, SSEReader, uvicorn_server


@pytest.fixture(scope="module")
def live(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("live") / "server.log"
    with uvicorn_server(db_url, log) as base:
        yield base


def test_a_race_streams_room_race_and_progress_events(live: str) -> None:
    host, guest, watcher = Api(live), Api(live), Api(live)
    code = host.ok("POST", "/api/rooms", 201, json={"game": "corners"})["code"]
    stream = SSEReader(f"{live}/rooms/{code}/events")
    try:
        assert stream.status == 200 and stream.content_type.startswith("text/event-stream")
        guest.ok("POST", f"/api/rooms/{code}/join")
        room = host.ok("POST", f"/api/rooms/{code}/start")
        games = room["race"]["games"]
        host.play_any(games[host.name])
        guest.play_any(games[guest.name])
        host.play_any(games[host.name])
        got = stream.take(5)
        assert [(e.event, e.data.get("type")) for e in got] == [
            ("room", "joined"),
            ("race", "started"),
            ("progress", None),
            ("progress", None),
            ("progress", None),
        ]
        ids = [e.id for e in got]
        assert ids == sorted(ids) and len(set(ids)) == 5
        assert [(e.data["player"], e.data["moves"]) for e in got[2:]] == [
            (host.name, 1),
            (guest.name, 1),
            (host.name, 2),
        ]
        assert got[2].data["game"] == games[host.name] and got[2].data["status"] == "playing"
        # Nobody but its owner reads a running race's game (contract v3): spectators watch
        # from the room; the started event does not name the deal.
        assert watcher.get(f"/api/games/{games[host.name]}").status_code == 403
        assert guest.get(f"/api/games/{games[host.name]}").status_code == 403
        assert got[1].data["race"]["deal"] is None

        # Forfeits end the race: progress (lost), standings, then finished.
        host.ok("POST", f"/api/games/{games[host.name]}/resign")
        guest.ok("POST", f"/api/games/{games[guest.name]}/resign")
        end = stream.take(4)
        assert [(e.event, e.data.get("type")) for e in end] == [
            ("progress", None),
            ("race", "standings"),
            ("progress", None),
            ("race", "finished"),
        ]
        standings = end[-1].data["race"]["standings"]
        assert {s["player"] for s in standings} == {host.name, guest.name}
        assert stream.quiet() == []  # each event once
    finally:
        stream.close()

    # From the start (Last-Event-ID 0), as a scout would ask: the started event has no deal.
    scout = SSEReader(f"{live}/rooms/{code}/events", {"Last-Event-ID": "0"})
    try:
        early = [e for e in scout.take(10) if e.event == "race"]
        assert [e.data["race"]["deal"] is None for e in early] == [True, True, False]
    finally:
        scout.close()

    # A client that comes back with Last-Event-ID gets exactly what followed it.
    again = SSEReader(f"{live}/rooms/{code}/events", {"Last-Event-ID": str(got[1].id)})
    try:
        replayed = again.take(7)
        assert [e.id for e in replayed] == [e.id for e in got[2:] + end]
        # Read back from the table, the events name the deal only once the race is over.
        race = [e.data["race"]["deal"] for e in replayed if e.event == "race"]
        assert race[:-1] == [None] and isinstance(race[-1], int)
        assert again.quiet() == []
        host.ok("POST", f"/api/rooms/{code}/leave")  # live again after the replay
        (left,) = again.take(1)
        assert left.event == "room" and left.data["type"] == "left"
        assert left.data["player"] == host.name
        assert again.quiet() == []
    finally:
        again.close()
    for who in (host, guest, watcher):
        who.close()


def test_after_parameter_and_unknown_rooms(live: str) -> None:
    host = Api(live)
    code = host.ok("POST", "/api/rooms", 201, json={"game": "patriarchs"})["code"]
    guest = Api(live)
    guest.ok("POST", f"/api/rooms/{code}/join")
    stream = SSEReader(f"{live}/rooms/{code}/events?after=0")
    try:
        created, joined = stream.take(2)
        assert (created.data["type"], joined.data["type"]) == ("created", "joined")
        assert joined.data["players"] == [host.name, guest.name]
    finally:
        stream.close()
    assert host.get("/rooms/NOSUCH/events").status_code == 404
    assert host.get(f"/rooms/{code}/events?after=-1").status_code == 422
    host.close()
    guest.close()


def test_the_html_view_sends_out_of_band_fragments(live: str) -> None:
    host, guest = Api(live), Api(live)
    code = host.ok("POST", "/api/rooms", 201, json={"game": "castles-end"})["code"]
    stream = SSEReader(f"{live}/rooms/{code}/events?view=html", html=True)
    try:
        guest.ok("POST", f"/api/rooms/{code}/join")
        games = host.ok("POST", f"/api/rooms/{code}/start")["race"]["games"]
        host.play_any(games[host.name])
        joined, started, progress = stream.take(3)
        assert joined.event == "room" and 'id="room-live"' in joined.data["html"]
        assert 'hx-swap-oob="true"' in joined.data["html"]
        assert guest.name in joined.data["html"]
        assert started.event == "race" and 'id="racers"' in started.data["html"]
        # A spectator's stream (no session) offers the Watch links.
        assert f"/rooms/{code}/watch/{games[host.name]}" in started.data["html"]
        row = progress.data["html"]
        assert progress.event == "progress" and row.startswith(f'<li id="racer-{games[host.name]}"')
        assert 'hx-swap-oob="true"' in row and 'data-moves="1"' in row
        assert stream.quiet() == []
    finally:
        stream.close()
    host.close()
    guest.close()


def test_a_client_catching_up_gets_every_page_of_what_it_missed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """More missed events than one read of the table: every page, in order, then live."""
    import app.services.rooms.feed as feed_module

    monkeypatch.setattr(feed_module, "EVENT_PAGE", 3)
    table = [EventRow(i, "ROOMAA", "progress", f'{{"n": {i}}}') for i in range(1, 9)]

    class Table:
        def events_after(self, code: str, after: int, limit: int) -> list[EventRow]:
            return [r for r in table if r.id > after][:limit]

    async def scenario() -> None:
        broker = InProcessBroker(engine=None)  # type: ignore[arg-type]  # no reads here
        feed = feed_module.RoomFeed(Table(), broker)  # type: ignore[arg-type]
        events = feed.events("ROOMAA", 2)
        got = [(await anext(events)).id for _ in range(6)]
        assert got == [3, 4, 5, 6, 7, 8]
        again, new = EventRow(8, "ROOMAA", "progress", "{}"), EventRow(9, "ROOMAA", "p", "{}")
        await broker.deliver([again, new])
        assert (await anext(events)).id == 9  # 8 was sent from the table already
        await events.aclose()
        assert broker.subscribers == 0

    run(scenario())
