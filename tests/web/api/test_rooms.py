"""Rooms and races through the JSON API (contract v2, "Rooms and races"), on both databases:
the room's life, every status code, the countdown, forfeits, standings, rematches, the
same-deal rule between racers, caps, idle expiry, and the events each change writes."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from app.db.models import Event, Game, as_utc
from app.services.players import now
from app.services.rooms.views import CODE_ALPHABET, Limits
from tests.web.hidden import check_event
from tests.web.support import error_code, move, new_player, stored_deal

# Races in these tests are on a known deal (the server would draw one), a number long enough
# that the hidden-card guard can tell it is nowhere in a body while it is sealed.
DEAL = 5_123_456_789_012_348  # Corners: a card can go up at once


@pytest.fixture()
def rooms(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The rooms service with no countdown and a known deal; tests change limits as needed."""
    service = app.state.services.rooms
    monkeypatch.setattr(service, "limits", Limits(countdown_s=0))
    monkeypatch.setattr(app.state.services.games, "draw_deal", lambda: DEAL)
    return service


def create(api: TestClient, game: str = "corners", headers: dict[str, str] | None = None) -> Any:
    answer = api.post("/api/rooms", json={"game": game}, headers=headers or {})
    assert answer.status_code == 201, answer.text
    return answer.json()


def join(api: TestClient, code: str, headers: dict[str, str]) -> Any:
    answer = api.post(f"/api/rooms/{code}/join", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


def start(api: TestClient, code: str, headers: dict[str, str] | None = None) -> Any:
    answer = api.post(f"/api/rooms/{code}/start", headers=headers or {})
    assert answer.status_code == 200, answer.text
    return answer.json()


def named(api: TestClient) -> tuple[str, dict[str, str]]:
    """A new API player with a known name: (name, their Authorization header)."""
    name = f"r{secrets.token_hex(5)}"
    return name, new_player(api, name)


def events(app: FastAPI, code: str) -> list[tuple[str, dict[str, Any]]]:
    with app.state.services.sessions() as db:
        rows = db.execute(
            select(Event.kind, Event.data).where(Event.room_code == code).order_by(Event.id)
        ).all()
    out = [(kind, json.loads(data)) for kind, data in rows]
    for kind, data in out:
        check_event(kind, data)
    return out


def a_legal_move(api: TestClient, game_id: str, headers: dict[str, str] | None = None) -> Any:
    state = api.get(f"/api/games/{game_id}", headers=headers or {}).json()
    moves = state["legal_moves"]
    to_foundation = [m for m in moves if m["to"].startswith("f")]
    return (to_foundation or moves)[0], state["version"]


def play(
    api: TestClient, game_id: str, headers: dict[str, str] | None = None, foundation: bool = False
) -> Any:
    chosen, version = a_legal_move(api, game_id, headers)
    if foundation:
        assert chosen["to"].startswith("f"), "the test deal has a foundation move"
    notation = f"{chosen['from']}-{chosen['to']}/{chosen['count']}"
    answer = move(api, game_id, notation, version, headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


# -- the room's life ------------------------------------------------------------------------


def test_create_read_join_leave(api: TestClient, rooms: Any, app: FastAPI) -> None:
    room = create(api)
    assert set(room) == {"code", "url", "game", "status", "players", "race"}
    code = room["code"]
    assert len(code) == 6 and set(code) <= set(CODE_ALPHABET)
    assert room["url"] == f"/rooms/{code}"
    assert room["game"] == "corners" and room["status"] == "open" and room["race"] is None
    assert [p["name"] for p in room["players"]] == [api.player["name"]]  # type: ignore[attr-defined]

    other = new_player(api)
    joined = join(api, code, other)
    assert len(joined["players"]) == 2
    assert join(api, code, other) == joined  # joining twice changes nothing

    read = api.get(f"/api/rooms/{code.lower()}", headers={})  # codes are not case-sensitive
    assert read.status_code == 200 and read.json() == joined

    left = api.post(f"/api/rooms/{code}/leave", headers=other)
    assert left.status_code == 200 and len(left.json()["players"]) == 1
    assert error_code(api.post(f"/api/rooms/{code}/leave", headers=other), 403) == "not_a_member"

    last = api.post(f"/api/rooms/{code}/leave")
    assert last.status_code == 200 and last.json()["status"] == "closed"
    assert error_code(api.post(f"/api/rooms/{code}/join", headers=other), 409) == "room_closed"
    assert error_code(api.post(f"/api/rooms/{code}/start"), 409) == "room_closed"

    kinds = [(k, d["type"]) for k, d in events(app, code)]
    assert kinds == [
        ("room", "created"),
        ("room", "joined"),
        ("room", "left"),
        ("room", "left"),
        ("room", "closed"),
    ]


def test_refusals(api: TestClient, rooms: Any) -> None:
    assert error_code(api.post("/api/rooms", json={"game": "nope"}), 422) == "invalid_request"
    assert error_code(api.post("/api/rooms", json={}), 422) == "invalid_request"
    assert error_code(api.post("/api/rooms", json={"game": 3}), 422) == "invalid_request"
    anonymous = {"Authorization": ""}
    no_token = api.post("/api/rooms", json={"game": "corners"}, headers=anonymous)
    assert error_code(no_token, 401) == "unauthenticated"
    code = create(api)["code"]
    for action in ("join", "leave", "start"):
        answer = api.post(f"/api/rooms/{code}/{action}", headers=anonymous)
        assert error_code(answer, 401) == "unauthenticated"
    for bad in ("ZZZZZZ", "AB", "abc-de", "0OIL15", "ABCDEFG"):
        assert error_code(api.get(f"/api/rooms/{bad}"), 404) == "not_found"
        assert error_code(api.post(f"/api/rooms/{bad}/join"), 404) == "not_found"
    stranger = new_player(api)
    assert error_code(api.post(f"/api/rooms/{code}/start", headers=stranger), 403) == (
        "not_a_member"
    )


def test_caps(api: TestClient, rooms: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rooms, "limits", Limits(countdown_s=0, max_members=2, rooms_per_player=2))
    first = create(api)["code"]
    create(api)
    too_many = api.post("/api/rooms", json={"game": "corners"})
    assert error_code(too_many, 409) == "too_many_rooms"
    join(api, first, new_player(api))
    full = api.post(f"/api/rooms/{first}/join", headers=new_player(api))
    assert error_code(full, 409) == "room_full"
    # Someone in two rooms cannot join a third either.
    busy = new_player(api)
    create(api, headers=busy)
    create(api, headers=busy)
    other = create(api, headers=new_player(api))["code"]
    assert error_code(api.post(f"/api/rooms/{other}/join", headers=busy), 409) == "too_many_rooms"


# -- races ------------------------------------------------------------------------------------


def test_start_countdown_and_same_deal(
    api: TestClient, rooms: Any, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rooms, "limits", Limits(countdown_s=60))
    other = new_player(api)
    code = create(api)["code"]
    join(api, code, other)
    room = start(api, code, other)  # any member may start
    race = room["race"]
    assert {"number", "deal", "starts_at", "games"} <= set(race)
    # The deal is sealed until the race ends (contract v3): no number, anywhere.
    assert room["status"] == "racing" and race["number"] == 1 and race["deal"] is None
    assert race["status"] == "running" and len(race["games"]) == 2
    mine = race["games"][api.player["name"]]  # type: ignore[attr-defined]
    theirs = next(g for n, g in race["games"].items() if g != mine)

    state = api.get(f"/api/games/{mine}").json()
    assert state["deal"] is None and state["rated"] is False and state["game"] == "corners"
    chosen = state["legal_moves"][0]
    early = move(api, mine, f"{chosen['from']}-{chosen['to']}/{chosen['count']}", 0)
    assert error_code(early, 409) == "race_not_started"
    assert api.get(f"/api/games/{mine}").json()["version"] == 0  # nothing changed

    # Racers never see each other's boards.
    assert error_code(api.get(f"/api/games/{theirs}"), 403) == "race_in_play"
    assert error_code(api.get(f"/api/games/{mine}", headers=other), 403) == "race_in_play"
    # Anyone else, too: a running race's games are their owners' alone (contract v3);
    # spectators watch from the room (the spectator view).
    watcher = new_player(api)
    assert error_code(api.get(f"/api/games/{theirs}", headers=watcher), 403) == "race_in_play"
    assert error_code(api.get(f"/api/games/{theirs}"), 403) == "race_in_play"

    assert error_code(api.post(f"/api/rooms/{code}/start"), 409) == "race_running"

    # The countdown ends: moves count.
    with app.state.services.sessions.begin() as db:
        db.query(Game).filter(Game.race_id.is_not(None), Game.deal == DEAL).filter(
            Game.id.in_([mine, theirs])
        ).update({Game.not_before: now() - timedelta(seconds=1)})
    after = move(api, mine, f"{chosen['from']}-{chosen['to']}/{chosen['count']}", 0)
    assert after.status_code == 200, after.text
    progress = [d for k, d in events(app, code) if k == "progress"]
    assert progress == [
        {
            "player": api.player["name"],  # type: ignore[attr-defined]
            "game": mine,
            "moves": 1,
            "foundation_cards": after.json()["on_foundations"],
            "status": "playing",
        }
    ]


def test_racers_get_no_hints(api: TestClient, rooms: Any, app: FastAPI) -> None:
    """Castle's End's hints are exact: in a race one would hand a racer the solver's line."""
    other = new_player(api)
    code = create(api, "castles-end")["code"]
    join(api, code, other)
    mine = start(api, code)["race"]["games"][api.player["name"]]  # type: ignore[attr-defined]
    before = api.get(f"/api/games/{mine}").json()
    refused = api.get(f"/api/games/{mine}/hint")
    assert error_code(refused, 409) == "hints_off_in_races"
    assert "Hints are off in races" in refused.json()["error"]["message"]
    assert api.get(f"/api/games/{mine}").json() == before  # nothing counted, nothing changed
    assert app.state.services.solver.hints_used(mine) == 0
    # Outside the race, the same player's games still get hints (the route, not the player).
    solo = api.post("/api/games", json={"game": "castles-end"}).json()["id"]
    assert app.state.services.solver.hint_position(solo, api.player["id"])[1] == 0  # type: ignore[attr-defined]


def test_forfeit_standings_and_rematch(api: TestClient, rooms: Any, app: FastAPI) -> None:
    second_name, second_auth = named(api)
    third_name, third_auth = named(api)
    code = create(api)["code"]
    join(api, code, second_auth)
    join(api, code, third_auth)
    race = start(api, code)["race"]
    mine = race["games"][api.player["name"]]  # type: ignore[attr-defined]
    second_game, third_game = race["games"][second_name], race["games"][third_name]

    # I put a card on a foundation, the second racer makes two moves, the third one move.
    play(api, mine, foundation=True)
    play(api, second_game, second_auth)
    play(api, second_game, second_auth)
    play(api, third_game, third_auth)

    # A refused move writes no event (events are written in the move's own transaction).
    before = events(app, code)
    stale = move(api, mine, "stock-waste", 0)
    assert error_code(stale, 409) == "stale_version"
    illegal = api.get(f"/api/games/{mine}").json()
    bad = move(api, mine, "f1-f2", illegal["version"])
    assert bad.status_code == 422, bad.text
    assert events(app, code) == before

    # Forfeit by resigning; the race goes on until everyone is done.
    assert api.post(f"/api/games/{second_game}/resign", headers=second_auth).status_code == 200
    assert api.get(f"/api/rooms/{code}").json()["race"]["status"] == "running"
    assert api.post(f"/api/games/{mine}/resign").status_code == 200
    # The last racer leaves the room mid-race: that is a forfeit too.
    left = api.post(f"/api/rooms/{code}/leave", headers=third_auth)
    assert left.status_code == 200

    room = api.get(f"/api/rooms/{code}").json()
    assert room["status"] == "open" and room["race"]["status"] == "finished"
    assert room["race"]["deal"] == DEAL  # the race is over: its deal is no secret now
    standings = room["race"]["standings"]
    assert [s["place"] for s in standings] == [1, 2, 3]
    assert all(s["status"] == "lost" for s in standings)
    # Nobody won: more cards on foundations first, then fewer moves.
    counts = [(-s["foundation_cards"], s["moves"]) for s in standings]
    assert counts == sorted(counts)
    assert standings[0]["game"] == mine and standings[0]["foundation_cards"] >= 1

    race_events = [d["type"] for k, d in events(app, code) if k == "race"]
    assert race_events == ["started", "standings", "standings", "finished"]
    # Only the event of its end names the deal.
    deals = [d["race"]["deal"] for k, d in events(app, code) if k == "race"]
    assert deals == [None, None, None, DEAL]

    # Rematch: a new race in the same room, on a new deal, one game per member.
    rooms.games.draw_deal = lambda: DEAL + 1
    again = start(api, code, second_auth)
    assert again["race"]["number"] == 2 and again["race"]["deal"] is None
    assert stored_deal(app, again["race"]["games"][second_name]) == DEAL + 1
    assert set(again["race"]["games"]) == {p["name"] for p in again["players"]}
    assert mine not in again["race"]["games"].values()


def test_sweep_forfeits_silent_racers_and_closes_idle_rooms(
    api: TestClient, rooms: Any, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    racing = create(api)["code"]
    game_id = start(api, racing)["race"]["games"][api.player["name"]]  # type: ignore[attr-defined]
    idle = create(api, headers=new_player(api))["code"]
    later = now() + timedelta(hours=2)
    monkeypatch.setattr(rooms, "clock", lambda: later)
    rooms.sweep()
    rooms.sweep()  # another worker's sweep finds nothing left to do
    monkeypatch.setattr(rooms, "clock", now)
    fresh = create(api, headers=new_player(api))["code"]
    rooms.sweep()  # nothing is idle by the real clock
    assert api.get(f"/api/rooms/{fresh}").json()["status"] == "open"
    assert api.get(f"/api/games/{game_id}").json()["status"] == "lost"
    assert api.get(f"/api/rooms/{racing}").json()["race"]["status"] == "finished"
    assert api.get(f"/api/rooms/{idle}").json()["status"] == "closed"
    # The race ended (two hours before the sweep's clock): the room is idle as well.
    assert api.get(f"/api/rooms/{racing}").json()["status"] == "closed"
    assert [(k, d["type"]) for k, d in events(app, idle)].count(("room", "closed")) == 1


def test_the_sweep_deletes_events_past_their_retention_in_bounded_batches(
    api: TestClient, rooms: Any, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = create(api)["code"]
    join(api, old, new_player(api))
    join(api, old, new_player(api))
    assert len(events(app, old)) == 3  # created, and two joins
    # Later than any event of this database, whatever clock the other tests pretended (event
    # ids follow time).
    with app.state.services.sessions() as db:
        latest = as_utc(db.scalar(select(func.max(Event.created_at)))) or now()
    day_later = max(now(), latest) + timedelta(days=3)
    fresh = create(api, headers=new_player(api))["code"]
    with app.state.services.sessions.begin() as db:  # the fresh room's event is written a day later
        db.execute(update(Event).where(Event.room_code == fresh).values(created_at=day_later))
    cutoff = day_later - timedelta(seconds=rooms.limits.event_retention_s)

    def ids() -> list[int]:  # every event of the database (other tests' rooms too)
        with app.state.services.sessions() as db:
            return list(db.scalars(select(Event.id).order_by(Event.id)))

    before = ids()
    assert rooms.prune_events(cutoff, most=2) == 2  # a bounded batch, the oldest first
    assert ids() == before[2:]
    while rooms.prune_events(cutoff, most=2):
        pass
    assert events(app, old) == [] and len(events(app, fresh)) == 1
    # The sweep prunes by its clock and the setting; the fresh event is within a day of it.
    monkeypatch.setattr(rooms, "clock", lambda: day_later)
    rooms.sweep()
    assert ("room", "created") in [(k, d["type"]) for k, d in events(app, fresh)]


def test_race_result_lists(api: TestClient, rooms: Any) -> None:
    code = create(api)["code"]
    game_id = start(api, code)["race"]["games"][api.player["name"]]  # type: ignore[attr-defined]
    api.post(f"/api/games/{game_id}/resign")
    results = rooms.results(api.player["id"])  # type: ignore[attr-defined]
    assert [(r.room, r.place, r.racers, r.status) for r in results] == [(code, 1, 1, "lost")]
    live = {r.code: r for r in rooms.live(200)}
    assert live[code].status == "open" and live[code].players == 1
