"""Html event streams cost one room read and one render per event and viewer variant in a
process, not one per stream (app/web/pages/rooms.py, LiveFragments), and each viewer still
gets their own fragment: their buttons, their race game, their CSRF token.

The streams' renderers are driven directly on one event loop, the way the event-stream route
uses them, with the rooms service's reads counted."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.requests import Request

from app.services.rooms.feed import EventRow
from app.services.rooms.views import Limits
from app.web.deps import SESSION_PLAYER
from app.web.http.csrf import session_token
from app.web.i18n import speaking
from app.web.pages.rooms import LiveFragments, html_events, live_context
from app.web.pages.templating import templates
from tests.aio import Turns, run

STREAMS = 30


def _player(c: TestClient) -> tuple[str, dict[str, str]]:
    created = c.post("/api/players", json={})
    assert created.status_code == 201, created.text
    body = created.json()
    return body["id"], {"Authorization": f"Bearer {body['token']}"}


def data_of(event: bytes) -> str:
    """The ``data`` of one encoded Server-Sent Event: its ``data:`` lines, joined."""
    lines = event.decode().split("\r\n")
    return "\n".join(line.removeprefix("data: ") for line in lines if line.startswith("data: "))


def _request(app: FastAPI, player: str | None, accept_language: str = "en") -> Request:
    session: dict[str, Any] = {} if player is None else {SESSION_PLAYER: player}
    headers = [(b"accept-language", accept_language.encode())]
    return Request({"type": "http", "app": app, "session": session, "headers": headers})


@pytest.fixture()
def room(app: FastAPI) -> dict[str, Any]:
    with TestClient(app) as c:
        owner, owner_auth = _player(c)
        guest, guest_auth = _player(c)
        code = c.post("/api/rooms", json={"game": "corners"}, headers=owner_auth).json()["code"]
        assert c.post(f"/api/rooms/{code}/join", headers=guest_auth).status_code == 200
    return {"code": code, "owner": owner, "guest": guest}


def _counted(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    rooms = app.state.services.rooms
    reads: list[str] = []
    get = rooms.get

    def counted(code: str) -> Any:
        reads.append(code)
        return get(code)

    monkeypatch.setattr(rooms, "get", counted)
    return reads


def test_many_html_streams_of_a_room_cost_one_read_and_one_render_per_variant(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    rooms = app.state.services.rooms
    code = room["code"]
    opened = rooms.get(code)
    # The streams of the room: its two members and many spectators (no player, or players who
    # are not members), each with a session of its own.
    viewers: list[str | None] = [room["owner"], room["guest"]]
    viewers += [None] * (STREAMS // 2) + [f"outsider{i:02}" for i in range(STREAMS // 2 - 2)]
    requests = [_request(app, v) for v in viewers]
    renderers = [html_events(r, rooms, opened) for r in requests]
    fragments: LiveFragments = app.state.live_fragments
    reads = _counted(app, monkeypatch)
    renders_before, contexts_before = fragments.renders, fragments.contexts
    event = rooms.events_after(code, 0)[-1]  # the guest's joining
    assert event.kind == "room"

    async def everyone(row: EventRow) -> list[bytes]:
        return await asyncio.gather(*(render(row) for render in renderers))

    events = run(everyone(event))
    assert all(e.startswith(f"id: {event.id}\r\nevent: room\r\n".encode()) for e in events)
    htmls = [data_of(e) for e in events]
    assert reads == [code]  # one room read for all the streams
    # What the room shows each member, and once what it shows everyone else.
    assert fragments.contexts - contexts_before == 3
    assert fragments.renders - renders_before == 2  # members and spectators: two variants

    live = templates.env.get_template("components/room_live.html")
    now = rooms.get(code)
    for viewer, request, html in zip(viewers, requests, htmls, strict=True):
        token = session_token(request.session)
        # Exactly what rendering for this viewer alone gives.
        alone = live.render({**live_context(now, viewer), "oob": True, "csrf": token})
        assert html == alone
        assert f'value="{token}"' in html and "csrf-token>" not in html
        member = viewer in (room["owner"], room["guest"])
        assert ("Leave the room" in html) is member
        assert ("Join this room" in html) is not member

    # A second event: one more read, whichever streams come to it first.
    reads.clear()
    later = EventRow(id=event.id + 1_000_000, room=code, kind="room", data="{}")
    run(everyone(later))
    assert reads == [code]


def test_a_pushed_event_is_each_viewers_own_fragment_once_its_room_is_read(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the broker's delivery pushes (``ready``) is what the stream's own task sends for
    the same event: nothing before the event's room is read (the stream then waits for it
    itself), each viewer's fragment after one shared read (``prepare``, awaited once)."""
    rooms = app.state.services.rooms
    code = room["code"]
    opened = rooms.get(code)
    viewers: list[str | None] = [room["owner"], room["guest"], None, "outsider"]
    renderers = [html_events(_request(app, v), rooms, opened) for v in viewers]
    renderers.append(html_events(_request(app, room["owner"]), rooms, opened, on_board=True))
    assert len({r.prepare for r in renderers}) == 1  # one for the broker to await per event
    reads = _counted(app, monkeypatch)
    event = rooms.events_after(code, 0)[-1]
    progress = EventRow(
        id=event.id + 1,
        room=code,
        kind="progress",
        data=json.dumps({"player": "racer", "game": "g1", "moves": 3, "foundation_cards": 2}),
    )

    async def scenario() -> tuple[list[bytes | None], list[bytes | None], list[bytes]]:
        before = [r.ready(event) for r in renderers]
        prepare = renderers[0].prepare
        assert prepare is not None
        await prepare(event)
        pushed = [r.ready(event) for r in renderers]
        pushed_progress = [r.ready(progress) for r in renderers]
        own = [await r(event) for r in renderers] + [await r(progress) for r in renderers]
        return before, pushed + pushed_progress, own

    before, pushed, own = run(scenario())
    assert before == [None] * len(renderers)
    assert pushed == own
    assert reads == [code]  # the prepare's read, shared by every stream's own render too
    assert len(set(own[:5])) == 5  # each stream its own bytes (its CSRF token at least)


def test_a_racers_board_stream_leaves_the_room_streams_their_link_to_the_board(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race panel beside a racer's board has no link to the board it is on; the room
    page's stream of the same racer, sharing what the room shows them, keeps it."""
    rooms = app.state.services.rooms
    monkeypatch.setattr(rooms, "limits", Limits(countdown_s=0))
    code = room["code"]
    rooms.start(code, room["owner"])
    now = rooms.get(code)
    assert now.race is not None
    mine = now.race.games[now.players[0]["name"]]
    request = _request(app, room["owner"])
    board, page = html_events(request, rooms, now, on_board=True), html_events(request, rooms, now)
    event = rooms.events_after(code, 0)[-1]

    async def both() -> list[str]:
        on_board = data_of(await board(event))  # first: the shared context is made for it
        return [on_board, data_of(await page(event))]

    on_board, on_page = run(both())
    assert 'id="my-board"' not in on_board
    assert f'id="my-board" href="/games/{mine}"' in on_page


def test_each_stream_gets_the_events_in_its_own_language(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The streams of one room share their renders by language too: a French spectator beside
    an English one gets the room and a racer's progress in French, whoever rendered first."""
    rooms = app.state.services.rooms
    opened = rooms.get(room["code"])
    langs = ["en", "fr", "en", "de", "fr"]
    requests = [_request(app, None, accept_language=lang) for lang in langs]
    renderers = [html_events(request, rooms, opened) for request in requests]
    fragments: LiveFragments = app.state.live_fragments
    before = fragments.renders
    event = rooms.events_after(room["code"], 0)[-1]
    progress = EventRow(
        id=2_000_000_001,
        room=room["code"],
        kind="progress",
        data=json.dumps(
            {"player": "racer", "game": "g1", "moves": 1, "foundation_cards": 2, "status": "won"}
        ),
    )

    async def everyone(row: EventRow) -> list[str]:
        return [data_of(e) for e in await asyncio.gather(*(r(row) for r in renderers))]

    live = templates.env.get_template("components/room_live.html")
    now = rooms.get(room["code"])
    for lang, request, html in zip(langs, requests, run(everyone(event)), strict=True):
        with speaking(lang):
            token = session_token(request.session)
            assert html == live.render({**live_context(now, None), "oob": True, "csrf": token})
    racers = run(everyone(progress))
    assert racers[0] == racers[2] and racers[1] == racers[4]
    assert len({racers[0], racers[1], racers[3]}) == 3  # English, French, German
    assert fragments.renders - before == 6  # three languages, two events


def test_a_progress_event_is_rendered_once_for_every_stream(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    rooms = app.state.services.rooms
    opened = rooms.get(room["code"])
    renderers = [html_events(_request(app, None), rooms, opened) for _ in range(STREAMS)]
    fragments: LiveFragments = app.state.live_fragments
    reads = _counted(app, monkeypatch)
    before = fragments.renders
    progress = {"player": "racer", "game": "g1", "moves": 3, "foundation_cards": 2}
    row = EventRow(
        id=2_000_000_000,
        room=room["code"],
        kind="progress",
        data=json.dumps({**progress, "status": "playing"}),
    )

    async def everyone() -> list[bytes]:
        return await asyncio.gather(*(render(row) for render in renderers))

    htmls = [data_of(e) for e in run(everyone())]
    assert fragments.renders - before == 1 and reads == []  # no read for progress at all
    assert len(set(htmls)) == 1 and "racer" in htmls[0]


def test_the_streams_waiting_for_a_room_read_go_on_a_slice_a_turn(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once an event's room is read, the streams that waited for it render and send a slice
    at a time (app/web/turns.py), so that the worker's moves run between the slices; each
    stream still gets its fragment."""
    monkeypatch.setattr(LiveFragments, "STREAMS_PER_TURN", 4)
    rooms = app.state.services.rooms
    opened = rooms.get(room["code"])
    renderers = [html_events(_request(app, None), rooms, opened) for _ in range(STREAMS)]
    event = rooms.events_after(room["code"], 0)[-1]

    async def everyone() -> list[int]:
        turns = Turns()

        async def one(render: Any) -> int:
            assert data_of(await render(event))
            return turns.count

        went = await asyncio.gather(*(one(render) for render in renderers))
        turns.stop()
        return went

    turns = run(everyone())
    per_turn = {t: turns.count(t) for t in set(turns)}
    assert max(per_turn.values()) == 4 and sum(per_turn.values()) == STREAMS


def test_a_failed_room_read_is_not_kept(
    app: FastAPI, room: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that fails (the database away) fails the streams waiting for it, and the next
    stream to need that event reads again rather than getting the failure from the cache."""
    rooms = app.state.services.rooms
    fragments: LiveFragments = app.state.live_fragments
    get = rooms.get
    calls: list[str] = []

    def failing(code: str) -> Any:
        calls.append(code)
        if len(calls) == 1:
            raise RuntimeError("database away")
        return get(code)

    monkeypatch.setattr(rooms, "get", failing)

    async def twice() -> Any:  # on one event loop: one cache
        with pytest.raises(RuntimeError):
            await fragments.room_at(room["code"], 1_500_000_000)
        return await fragments.room_at(room["code"], 1_500_000_000)

    assert run(twice()).code == room["code"]
    assert len(calls) == 2
