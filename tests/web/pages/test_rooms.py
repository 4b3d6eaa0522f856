"""Rooms in the browser: the home page's live list, creating and joining by link or code (as
anonymous players), the room page and its live wiring, starting, spectating a racer's board
(public view; racers refused), and race results on the player page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.engine import GAMES
from app.services.rooms.views import Limits
from tests.web.hidden import HiddenCardGuard
from tests.web.support import csrf, stored_game

CODE_IN_URL = re.compile(r"/rooms/([A-Z0-9]{6})$")


@pytest.fixture()
def rooms(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(app.state.services.rooms, "limits", Limits(countdown_s=0))
    return app.state.services.rooms


@contextmanager
def browser(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    """Another browser: a new anonymous player, every response checked by the guard."""
    with TestClient(app, base_url="http://testserver") as c:
        c.event_hooks["response"].append(guard.check)
        yield c


def form(client: TestClient, url: str, data: dict[str, str] | None = None) -> Any:
    return client.post(
        url, data={**(data or {}), "csrftoken": csrf(client)}, follow_redirects=False
    )


def no_inline_script(html: str) -> None:
    """The page obeys a strict CSP: scripts only from files, no inline handlers, no hx-on."""
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag, tag
    assert not re.search(r"<script\b[^>]*>[^<]+</script>", html)
    assert not re.search(r"\son[a-z]+=", html) and "hx-on" not in html


def create_room(client: TestClient, game: str = "corners") -> str:
    created = form(client, "/rooms", {"game": game})
    assert created.status_code == 303, created.text
    found = CODE_IN_URL.search(created.headers["location"])
    assert found is not None
    return found[1]


def name_of(client: TestClient) -> str:
    page = client.get("/account").text
    found = re.search(r'name="name"[^>]*value="([^"]+)"', page)
    assert found is not None, "the account page shows the player's name"
    return found[1]


def test_room_page_join_start_and_spectate(
    client: TestClient, app: FastAPI, guard: HiddenCardGuard, rooms: Any
) -> None:
    code = create_room(client)
    page = client.get(f"/rooms/{code}")
    assert page.status_code == 200
    html = page.text
    no_inline_script(html)
    assert f'sse-connect="/rooms/{code}/events?view=html&amp;after=' in html
    assert 'sse-swap="room,race,progress"' in html and 'hx-ext="sse"' in html
    assert "/static/vendor/htmx-ext-sse-2.2.4.min.js" in html
    assert 'id="start-race"' in html and "Join this room" not in html
    assert client.get("/static/vendor/htmx-ext-sse-2.2.4.min.js").status_code == 200

    with browser(app, guard) as guest, browser(app, guard) as spectator:
        # The guest arrives by the code typed in lower case, then joins.
        found = form(guest, "/rooms/find", {"code": f" {code.lower()} "})
        assert found.status_code == 303 and found.headers["location"] == f"/rooms/{code}"
        assert "Join this room" in guest.get(f"/rooms/{code}").text
        joined = form(guest, f"/rooms/{code}/join")
        assert joined.status_code == 303 and joined.headers["location"] == f"/rooms/{code}"
        assert client.get(f"/rooms/{code}").text.count("<li>") >= 2

        started = form(guest, f"/rooms/{code}/start")
        assert started.status_code == 303
        room = client.get(f"/api/rooms/{code}").json()
        games = room["race"]["games"]
        mine, theirs = games[name_of(client)], games[name_of(guest)]

        racer_page = client.get(f"/rooms/{code}").text
        no_inline_script(racer_page)
        assert f'href="/games/{mine}"' in racer_page and 'id="countdown"' in racer_page
        assert f'id="racer-{mine}"' in racer_page and f'id="racer-{theirs}"' in racer_page
        assert "/watch/" not in racer_page  # racers do not watch each other
        assert client.get(f"/rooms/{code}/watch/{theirs}").status_code == 403
        assert client.get(f"/games/{theirs}").status_code == 403

        # Beside a racer's own board: the race, live (no link to the board it is on).
        board = client.get(f"/games/{mine}").text
        no_inline_script(board)
        assert 'class="race-panel"' in board
        assert f'sse-connect="/rooms/{code}/events?view=board&amp;after=' in board
        assert f'id="racer-{theirs}"' in board and 'id="my-board"' not in board
        # Hints are off in races: no Hint button, the note says so, and the route refuses.
        assert 'action="/games/' + mine + '/hint"' not in board
        assert "Hints are off in races" in board
        refused = client.post(
            f"/games/{mine}/hint", headers={"HX-Request": "true", "X-CSRFToken": csrf(client)}
        )
        assert refused.status_code == 200 and "Hints are off in races" in refused.text
        # Restarting would quietly forfeit the race: the board offers no restart while the race
        # is on, resigning says what it does, and the route refuses with the game unchanged.
        assert 'action="/games/' + mine + '/restart"' not in board
        assert "Resign from the race?" in board
        restarted = form(client, f"/games/{mine}/restart")
        assert restarted.status_code == 409 and "resign it to leave the race" in restarted.text
        assert stored_game(app, mine)[1] == "playing"

        # A spectator (never joined) watches either racer, public view only (the guard checks).
        watching = spectator.get(f"/rooms/{code}").text
        assert f'href="/rooms/{code}/watch/{mine}"' in watching
        assert "Join this room" in watching
        watch = spectator.get(f"/rooms/{code}/watch/{mine}")
        assert watch.status_code == 200
        no_inline_script(watch.text)
        assert 'hx-trigger="sse:progress"' in watch.text and 'id="game-status"' in watch.text
        # The racer's game itself is its owner's alone while the race is on (contract v3).
        assert spectator.get(f"/games/{mine}").status_code == 403
        fragment = spectator.get(f"/rooms/{code}/watch/{mine}/board")
        assert fragment.status_code == 200 and 'id="pile-' in fragment.text
        assert "<html" not in fragment.text
        assert spectator.get(f"/rooms/{code}/watch/not-in-race").status_code == 404

        # Both resign: the finish table and the player page's races.
        assert form(client, f"/games/{mine}/resign").status_code == 303
        # Out of the race, the deal stays sealed while the race goes on: no number, no replay
        # and no second game of it, which could deal the race's stock to a second account.
        out = client.get(f"/games/{mine}").text
        assert "Play this deal again" not in out and "sealed while a competition" in out
        assert 'action="/games/' + mine + '/restart"' not in out
        assert form(client, f"/games/{mine}/restart").status_code == 403
        assert form(guest, f"/games/{theirs}/resign").status_code == 303
        # The race is over: the deal opens.
        assert "Play this deal again" in client.get(f"/games/{mine}").text
        done = spectator.get(f"/rooms/{code}").text
        assert 'id="finish-table"' in done and "Rematch (new deal)" not in done
        assert "Rematch (new deal)" in client.get(f"/rooms/{code}").text
        player_page = spectator.get(f"/players/{name_of(guest)}").text
        assert f'href="/rooms/{code}"' in player_page and " of 2</td>" in player_page

        left = form(guest, f"/rooms/{code}/leave")
        assert left.status_code == 303 and left.headers["location"] == "/"


def test_home_lists_live_rooms(client: TestClient, rooms: Any) -> None:
    code = create_room(client, "patriarchs")
    home = client.get("/").text
    no_inline_script(home)
    assert 'id="live-now"' in home and f'href="/rooms/{code}"' in home
    assert "playing now" in home and 'action="/rooms"' in home


def test_a_typed_rooms_address_leads_to_where_rooms_are_made_and_found(
    client: TestClient,
) -> None:
    answer = client.get("/rooms", follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (303, "/#live-now")
    assert 'id="live-now"' in client.get("/").text
    assert 'action="/rooms/find"' in client.get("/").text


def test_home_puts_an_empty_live_now_after_the_games(
    client: TestClient, rooms: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23: an empty "Live now" box came first; the games' actions line up in one box."""
    with monkeypatch.context() as quiet:  # (other tests' rooms are open on this database)
        quiet.setattr(rooms, "live", lambda limit: [])
        home = client.get("/").text
    assert 'id="live-now"' in home and "No rooms open right now" in home
    assert home.index('class="game-list"') < home.index('id="live-now"')
    assert home.count('class="card-actions"') == len(GAMES)
    code = create_room(client, "patriarchs")
    home = client.get("/").text
    assert home.index('id="live-now"') < home.index('class="game-list"')
    assert f'href="/rooms/{code}"' in home


def test_refusals_in_the_browser(client: TestClient, rooms: Any) -> None:
    assert client.get("/rooms/NOSUCH").status_code == 404
    assert form(client, "/rooms/find", {"code": "nope"}).status_code == 422
    assert form(client, "/rooms/find", {"code": "YYYYYY"}).status_code == 404
    assert form(client, "/rooms", {"game": "nope"}).status_code == 422
    assert form(client, "/rooms/NOSUCH/join").status_code == 404
    code = create_room(client)
    assert client.get(f"/rooms/{code.lower()}", follow_redirects=False).status_code == 303
    with TestClient(client.app, base_url="http://testserver") as stranger:
        assert form(stranger, f"/rooms/{code}/start").status_code == 403
        assert form(stranger, f"/rooms/{code}/leave").status_code == 403
        # Without the CSRF token, nothing happens.
        refused = stranger.post(f"/rooms/{code}/join", follow_redirects=False)
        assert refused.status_code == 403
    assert len(client.get(f"/api/rooms/{code}").json()["players"]) == 1


def test_a_watched_board_outlives_a_rematch_and_the_room_and_a_closed_room_offers_a_next_step(
    client: TestClient, app: FastAPI, guard: HiddenCardGuard, rooms: Any
) -> None:
    """Issue 23: the spectator's page asked for its board after a rematch or after the room
    closed and got 404s; it was offered to play "this deal again" though it never played it;
    a closed room left its visitors with nothing to do."""
    code = create_room(client, "quadrangle")
    with browser(app, guard) as guest, browser(app, guard) as spectator:
        assert form(guest, f"/rooms/{code}/join").status_code == 303
        assert form(client, f"/rooms/{code}/start").status_code == 303
        first = client.get(f"/api/rooms/{code}").json()["race"]["games"][name_of(client)]
        theirs = client.get(f"/api/rooms/{code}").json()["race"]["games"][name_of(guest)]
        watch, board = f"/rooms/{code}/watch/{first}", f"/rooms/{code}/watch/{first}/board"
        assert spectator.get(watch).status_code == 200
        assert form(client, f"/games/{first}/resign").status_code == 303
        assert form(guest, f"/games/{theirs}/resign").status_code == 303
        # The race is over: a spectator is offered the deal, not to play it "again".
        ended = spectator.get(watch).text
        assert "Play this deal again" not in ended and "Play this deal <small>" in ended
        assert "Play this deal again" in client.get(f"/games/{first}").text
        # A rematch: the page still open on the first race's board keeps working.
        assert form(client, f"/rooms/{code}/start").status_code == 303
        second = client.get(f"/api/rooms/{code}").json()["race"]["games"][name_of(client)]
        assert second != first
        assert spectator.get(watch).status_code == 200
        assert spectator.get(board).status_code == 200
        # Everyone leaves: the room closes, the watched board is still there to look at.
        assert form(client, f"/rooms/{code}/leave").status_code == 303
        assert form(guest, f"/rooms/{code}/leave").status_code == 303
        assert client.get(f"/api/rooms/{code}").json()["status"] == "closed"
        assert spectator.get(board).status_code == 200
        assert spectator.get(watch).status_code == 200
        # The closed room says so and offers the next step.
        closed = spectator.get(f"/rooms/{code}").text
        assert "This room has closed." in closed
        assert 'action="/rooms"' in closed and "Open a new room (Quadrangle)" in closed
        assert "Join this room" not in closed
        # A game of another room's race is still no game of this room.
        other = create_room(spectator, "corners")
        assert spectator.get(f"/rooms/{other}/watch/{first}").status_code == 404
