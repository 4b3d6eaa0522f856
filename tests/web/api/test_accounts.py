"""Players' data (contract v3, Accounts): the export holds everything about the player and
nothing about anyone else, and never a sealed deal's number or a state; deletion leaves no
personal data, keeps the games as anonymous records, and every page still renders. The
operator's tools: rename, ban, revoke, delete."""

from __future__ import annotations

import json
import re
import time

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.cli import main as cli
from app.config import Settings
from app.db.models import Event, Game, Player
from app.services.accounts import exported_deal
from tests.waiting import wait_until
from tests.web.support import browser_post, csrf, new_game, new_player

GHOST = re.compile(r"deleted-[0-9a-f]{8}")


def _me(app: FastAPI, player_id: str) -> Player:
    with app.state.services.sessions() as db:
        player: Player | None = db.get(Player, player_id)
        assert player is not None
        return player


def test_the_export_holds_the_players_data_and_nothing_of_others(
    app: FastAPI, api: TestClient
) -> None:
    me = api.player  # type: ignore[attr-defined]
    app.state.services.players.save_prefs(me["id"], "theme=dark")
    casual = api.post("/api/games", json={"game": "corners", "deal": 42}).json()
    assert api.post(f"/api/games/{casual['id']}/resign").status_code == 200
    rated = api.post("/api/games", json={"game": "corners"}).json()
    other = new_player(api)
    theirs = api.post("/api/games", json={"game": "corners", "deal": 42}, headers=other).json()
    room = api.post("/api/rooms", json={"game": "corners"}).json()["code"]
    assert api.post(f"/api/rooms/{room}/join", headers=other).status_code == 200
    race = api.post(f"/api/rooms/{room}/start").json()["race"]
    their_name = next(n for n in race["games"] if n != me["name"])

    answer = api.get("/api/me/export")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    data = answer.json()
    assert data["player"]["id"] == me["id"] and data["player"]["name"] == me["name"]
    assert data["player"]["has_api_token"] and not data["player"]["has_password"]
    assert data["player"]["prefs"] == "theme=dark"
    games = {g["id"]: g for g in data["games"]}
    assert set(games) == {casual["id"], rated["id"], race["games"][me["name"]]}
    assert games[casual["id"]]["deal"] == 42 and games[casual["id"]]["status"] == "lost"
    assert [e["action"] for e in games[casual["id"]]["log"]] == ["resign"]
    # Sealed: a rated game in play and a game of a running race hide their number.
    assert games[rated["id"]]["deal"] is None
    assert games[race["games"][me["name"]]]["deal"] is None
    assert [r["my_game"] for r in data["races"]] == [race["games"][me["name"]]]
    assert [r["code"] for r in data["rooms"]] == [room]
    # No state, no card, nothing of the other player.
    text = answer.text
    assert "piles" not in text and "state" not in text
    for foreign in (theirs["id"], race["games"][their_name], their_name, other["Authorization"]):
        assert foreign not in text


def test_the_export_decision_on_deal_numbers() -> None:
    def game(**values: object) -> Game:
        return Game(deal=7, rated=False, status="playing", race_id=None, **values)

    assert exported_deal(game(), None) == 7
    assert exported_deal(Game(deal=7, rated=True, status="playing", race_id=None), None) is None
    assert exported_deal(Game(deal=7, rated=True, status="won", race_id=None), None) == 7
    assert exported_deal(Game(deal=7, rated=False, status="won", race_id=3), False) is None
    assert exported_deal(Game(deal=7, rated=False, status="won", race_id=3), True) == 7


def test_deleting_through_the_api_leaves_no_personal_data(app: FastAPI, api: TestClient) -> None:
    me = api.player  # type: ignore[attr-defined]
    finished = api.post("/api/games", json={"game": "corners", "deal": 4242}).json()
    api.post(f"/api/games/{finished['id']}/resign")
    room = api.post("/api/rooms", json={"game": "corners"}).json()["code"]
    app.state.services.players.set_password(me["id"], "a good password")
    app.state.services.players.save_prefs(me["id"], "theme=dark")

    assert api.request("DELETE", "/api/me").status_code == 401  # the password is needed
    wrong = api.request("DELETE", "/api/me", json={"password": "not it at all"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "bad_credentials"
    gone = api.request("DELETE", "/api/me", json={"password": "a good password"})
    assert gone.status_code == 200, gone.text
    ghost = gone.json()["name"]
    assert GHOST.fullmatch(ghost)

    row = _me(app, me["id"])
    assert (row.name, row.name_key) == (ghost, ghost)
    assert row.password_hash is None and row.token_hash is None and row.deleted_at is not None
    assert row.prefs is None
    with app.state.services.sessions() as db:
        events = db.scalars(select(Event.data).where(Event.room_code == room)).all()
    assert events and not any(me["name"] in e for e in events)
    assert api.get("/api/me/export").status_code == 401  # the token is gone
    del api.headers["Authorization"]
    # The games stay, as the ghost's: the pages and the game still answer.
    anonymous = api.get(f"/api/games/{finished['id']}")
    assert anonymous.status_code == 200 and anonymous.json()["player"]["name"] == ghost
    for page in (f"/players/{ghost}", "/deal/corners/4242", "/leaderboard", f"/rooms/{room}"):
        assert api.get(page).status_code == 200, page
    assert api.get(f"/players/{me['name']}").status_code == 404
    # The ghost name can never be chosen; the old name is free again.
    taken = api.post("/api/players", json={"name": ghost})
    assert taken.status_code == 422
    assert api.post("/api/players", json={"name": "Deleted-00000000"}).status_code == 422
    assert api.post("/api/players", json={"name": me["name"]}).status_code == 201


def test_deleting_in_the_browser_needs_the_csrf_token_and_a_confirmation(
    app: FastAPI, client: TestClient
) -> None:
    new_game(client, "corners", 77)
    page = client.get("/account")
    assert 'action="/account/delete"' in page.text
    name = re.search(r"<h1>You are ([^<]+)</h1>", page.text)
    assert name
    assert client.post("/account/delete", data={"confirm": "delete"}).status_code == 403
    assert browser_post(client, "/account/delete", {}).status_code == 422
    export = client.get("/account/export")
    assert export.status_code == 200 and json.loads(export.text)["player"]["name"] == name[1]
    done = browser_post(client, "/account/delete", {"confirm": "delete"})
    assert done.status_code == 200 and "Your account is deleted" in done.text
    assert client.get("/account/export").status_code == 404  # signed out: no player any more
    assert "<h1>Your account</h1>" in client.get("/account", follow_redirects=True).text
    csrf(client, fresh=True)


def test_operator_tools(
    app: FastAPI, api: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    me = api.player  # type: ignore[attr-defined]
    name, new = me["name"], "Renamed" + me["id"][:6].replace("-", "x").replace("_", "y")
    assert cli(["player", "rename", name, new], settings=settings) == 0
    assert api.get(f"/players/{new}").status_code == 200

    assert cli(["player", "ban", new], settings=settings) == 0
    refused = api.post("/api/games", json={"game": "corners"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "banned"
    assert api.post("/api/games", json={"game": "corners", "deal": 5}).status_code == 201
    assert cli(["player", "ban", new, "--undo"], settings=settings) == 0
    assert api.post("/api/games", json={"game": "corners"}).status_code == 201

    # Another process revokes. On PostgreSQL this one hears of it as it commits (NOTIFY
    # ph_players, as it reaches the app's event loop); on SQLite it sees it once its cached
    # token owner is too old: its clock moved on by that time.
    players = app.state.services.players
    later = time.monotonic() + players.TOKEN_CACHE_SECONDS + 1
    monkeypatch.setattr(players, "clock", lambda: later)
    assert cli(["player", "revoke", new], settings=settings) == 0
    token = api.headers["Authorization"].removeprefix("Bearer ")
    wait_until(lambda: players.cached_token_owner(token) is None, "the revocation heard")
    assert api.get("/api/me/export").status_code == 401
    assert cli(["player", "delete", new], settings=settings) == 0
    assert GHOST.fullmatch(_me(app, me["id"]).name)
    assert cli(["player", "ban", "nobody-here"], settings=settings) == 1


def test_a_banned_players_games_leave_the_leaderboard(app: FastAPI, api: TestClient) -> None:
    from app.db.models import PlayerStats

    me = api.player  # type: ignore[attr-defined]
    with app.state.services.sessions.begin() as db:
        db.add(PlayerStats(player_id=me["id"], game="all", played=50, won=50, wilson=0.999))
    assert me["name"] in api.get("/api/leaderboard").text
    with app.state.services.sessions.begin() as db:
        player = db.get(Player, me["id"])
        assert player is not None
        player.banned_at = player.created_at
    assert me["name"] not in api.get("/api/leaderboard").text
    with app.state.services.sessions.begin() as db:
        db.delete(db.get(PlayerStats, (me["id"], "all")))
