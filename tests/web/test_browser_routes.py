"""The browser side: session cookie and identity, CSRF, starting games, HTMX fragments, pages.

The tests read markup only through the contract's stable ids (``pile-…``, ``game-status``);
everything else about the pages is the board's to change.
"""

from __future__ import annotations

import base64
import html
import json
import re
import uuid
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import Game, Player
from app.engine import GAMES
from app.main import SESSION_COOKIE
from tests.web.support import (
    GAME_SLUGS,
    browser_post,
    csrf,
    error_code,
    pile_ids,
    snapshot,
    start,
)

PASSWORD = "correct horse battery staple"


def new_browser_game(client: TestClient, game: str = "quadrangle", deal: str = "1") -> str:
    response = client.post(
        "/games",
        data={"game": game, "deal": deal, "csrftoken": csrf(client)},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert re.fullmatch(r"/games/[A-Za-z0-9_-]{22,}", location), location
    return location.rsplit("/", 1)[1]


def another_browser(client: TestClient) -> TestClient:
    """A second browser on the same app, checked by the same hidden-card guard."""
    other = TestClient(client.app, base_url=str(client.base_url))
    other.event_hooks["response"] = list(client.event_hooks["response"])
    return other


def player_of(client: TestClient, game_id: str) -> dict[str, str]:
    player: dict[str, str] = client.get(f"/api/games/{game_id}").json()["player"]
    return player


def players_count(app: FastAPI) -> int:
    with app.state.services.sessions() as db:
        return int(db.scalar(select(func.count()).select_from(Player)) or 0)


def games_count(app: FastAPI, player_id: str) -> int:
    with app.state.services.sessions() as db:
        query = select(func.count()).select_from(Game).where(Game.player_id == player_id)
        return int(db.scalar(query) or 0)


# -- identity ----------------------------------------------------------------------------------


def test_first_visit_sets_a_signed_httponly_lax_cookie(client: TestClient, app: FastAPI) -> None:
    before = players_count(app)
    first = client.get("/")
    assert first.status_code == 200
    cookies = [c for c in first.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE)]
    assert len(cookies) == 1, first.headers.get_list("set-cookie")
    attributes = [a.strip().lower() for a in cookies[0].split(";")]
    assert "httponly" in attributes
    assert "samesite=lax" in attributes
    assert "secure" not in attributes  # not in development and test: see test_security.py
    assert players_count(app) == before  # lazy players: a visit alone makes none
    game_id = new_browser_game(client)
    assert players_count(app) == before + 1  # the first action makes an anonymous player
    assert client.get("/").status_code == 200
    assert players_count(app) == before + 1  # the same one on the next visit
    player = player_of(client, game_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]{3,24}", player["name"])
    assert player_of(client, new_browser_game(client)) == player


def test_the_session_cookie_cannot_be_forged(client: TestClient, app: FastAPI) -> None:
    owner = player_of(client, new_browser_game(client))
    cookie = str(client.cookies[SESSION_COOKIE])
    payload, signature = cookie.split(".", 1)
    with another_browser(client) as attacker:
        assert attacker.get("/").status_code == 200
        own_signature = str(attacker.cookies[SESSION_COOKIE]).split(".", 1)[1]
    unsigned = base64.b64encode(json.dumps({"pid": owner["id"]}).encode()).decode()
    flipped = signature[:-3] + ("A" if signature[-3] != "A" else "B") + signature[-2:]
    for forged in (f"{payload}.{flipped}", unsigned, f"{payload}.{own_signature}"):
        with another_browser(client) as other:
            other.cookies.set(SESSION_COOKIE, forged)
            assert other.get("/").status_code == 200
            assert player_of(other, new_browser_game(other))["id"] != owner["id"], forged


def test_choose_a_name(client: TestClient, api: TestClient) -> None:
    game_id = new_browser_game(client)
    name = f"Bea_{uuid.uuid4().hex[:8]}"
    chosen = browser_post(client, "/account/name", {"name": name})
    assert chosen.status_code == 303
    assert player_of(client, game_id)["name"] == name
    assert name in client.get("/account").text
    # Taken names (whatever their case) and bad names are refused; the name stays.
    taken = api.post("/api/players", json={"name": f"Cy_{uuid.uuid4().hex[:8]}"}).json()["name"]
    assert browser_post(client, "/account/name", {"name": taken.upper()}).status_code == 409
    for bad in ("ab", "no spaces", "x" * 25):
        assert browser_post(client, "/account/name", {"name": bad}).status_code == 422
    assert player_of(client, game_id)["name"] == name
    # Renaming to the same name in another case is allowed: it is still yours.
    assert browser_post(client, "/account/name", {"name": name.upper()}).status_code == 303
    assert player_of(client, game_id)["name"] == name.upper()


def test_password_and_sign_in_from_another_device(client: TestClient, app: FastAPI) -> None:
    game_id = new_browser_game(client, "corners", "5")
    me = player_of(client, game_id)
    name = f"Dee_{uuid.uuid4().hex[:8]}"
    assert browser_post(client, "/account/name", {"name": name}).status_code == 303
    assert browser_post(client, "/account/password", {"password": "short"}).status_code == 422
    assert browser_post(client, "/account/password", {"password": PASSWORD}).status_code == 303
    with app.state.services.sessions() as db:
        row = db.get(Player, me["id"])
        assert row is not None and row.password_hash is not None
        stored = [str(v) for v in (row.name, row.name_key, row.password_hash, row.token_hash)]
    assert row.password_hash.startswith("$argon2")
    assert PasswordHasher().verify(row.password_hash, PASSWORD)
    assert all(PASSWORD not in value for value in stored)

    with another_browser(client) as phone:
        wrong = browser_post(phone, "/signin", {"name": name, "password": "not the password"})
        assert wrong.status_code == 401
        # The account page again, with the reason and the sign-in form to try once more.
        assert "Not signed in:" in wrong.text and 'action="/signin"' in wrong.text
        assert player_of(phone, new_browser_game(phone))["id"] != me["id"]
        signed_in = browser_post(phone, "/signin", {"name": name.lower(), "password": PASSWORD})
        assert signed_in.status_code == 303
        assert f"/games/{game_id}" in phone.get("/").text  # the same player's games
        assert player_of(phone, new_browser_game(phone))["id"] == me["id"]
        assert browser_post(phone, "/signout", {}).status_code == 303
        assert player_of(phone, new_browser_game(phone))["id"] != me["id"]


# -- CSRF --------------------------------------------------------------------------------------


def test_a_cookie_post_without_the_csrf_token_is_refused(client: TestClient, app: FastAPI) -> None:
    game_id = new_browser_game(client)
    me = player_of(client, game_id)
    games_before, board_before = games_count(app, me["id"]), snapshot(app, client, game_id)
    move = {"from": "t5", "to": "t9", "count": "1", "version": "0"}
    attempts = [
        ("/games", {"game": "corners"}),
        ("/account/name", {"name": f"Eve_{uuid.uuid4().hex[:8]}"}),
        ("/account/password", {"password": PASSWORD}),
        (f"/games/{game_id}/moves", move),
        (f"/games/{game_id}/undo", {}),
        (f"/games/{game_id}/resign", {}),
    ]
    for url, data in attempts:
        for token in (None, "", "forged", csrf(client) + "x"):
            body = data if token is None else {**data, "csrftoken": token}
            response = client.post(url, data=body, follow_redirects=False)
            assert response.status_code == 403, (url, token, response.text)
        hx = client.post(url, data=data, headers={"HX-Request": "true", "x-csrftoken": "nope"})
        assert hx.status_code == 403
    # Another browser's token does not fit this browser's cookie.
    with another_browser(client) as other:
        stolen = csrf(other)
    assert client.post("/games", data={"game": "corners", "csrftoken": stolen}).status_code == 403
    assert games_count(app, me["id"]) == games_before
    assert snapshot(app, client, game_id) == board_before
    assert player_of(client, game_id) == me
    with app.state.services.sessions() as db:
        row = db.get(Player, me["id"])
        assert row is not None and row.password_hash is None


def test_the_csrf_header_works_like_the_form_field(client: TestClient) -> None:
    game_id = new_browser_game(client)
    response = client.post(
        f"/games/{game_id}/moves",
        data={"from": "t5", "to": "t9", "count": "1", "version": "0"},
        headers={"HX-Request": "true", "x-csrftoken": csrf(client)},
    )
    assert response.status_code == 200, response.text
    assert client.get(f"/api/games/{game_id}").json()["version"] == 1


def test_api_bearer_routes_ignore_cookies(client: TestClient, api: TestClient) -> None:
    game_id = new_browser_game(client)
    assert client.cookies.get(SESSION_COOKIE)
    # The browser's session cookie is no credential for the API...
    body = {"from": "t5", "to": "t9", "count": 1, "version": 0}
    refused = [
        client.post("/api/games", json={"game": "corners"}),
        client.post(f"/api/games/{game_id}/moves", json=body),
        client.post(f"/api/games/{game_id}/resign"),
    ]
    for response in refused:
        assert error_code(response, 401) == "unauthenticated"
    # ...and a bearer request needs no CSRF token, cookies or not.
    bearer = {"Authorization": str(api.headers["Authorization"])}
    started = client.post("/api/games", json={"game": "corners"}, headers=bearer)
    assert started.status_code == 201, started.text
    assert started.json()["player"]["id"] == api.player["id"]  # type: ignore[attr-defined]
    # The browser's own game is not the API player's.
    other = client.post(f"/api/games/{game_id}/moves", json=body, headers=bearer)
    assert error_code(other, 403) == "forbidden"


# -- starting games ------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", GAME_SLUGS)
def test_post_games_redirects_to_the_board(client: TestClient, slug: str) -> None:
    game_id = new_browser_game(client, slug, "77")
    game = client.get(f"/api/games/{game_id}").json()
    assert (game["game"], game["deal"], game["version"]) == (slug, 77, 0)
    board = client.get(f"/games/{game_id}")
    assert board.status_code == 200
    assert pile_ids(board.text) == set(GAMES[slug].pile_ids)
    assert 'id="game-status"' in board.text
    random_deal = new_browser_game(client, slug, "")
    assert client.get(f"/api/games/{random_deal}").json()["game"] == slug


@pytest.mark.parametrize(
    ("game", "deal"),
    [("klondike", "1"), ("", "1"), ("corners", "abc"), ("corners", "0"), ("corners", "-3"),
     ("corners", str(2**53)), ("corners", "1.5"), ("corners", "9" * 20), ("corners", "²"),
     ("corners", "١٢")],
)  # fmt: skip
def test_post_games_refuses_bad_forms(client: TestClient, game: str, deal: str) -> None:
    response = browser_post(client, "/games", {"game": game, "deal": deal})
    assert 400 <= response.status_code < 500, response.text
    assert "location" not in response.headers


@pytest.mark.parametrize(
    ("deal", "said"),
    [("9" * 26, "Deal numbers run from 1 to 9,007,199,254,740,991."),
     ("twenty-six characters long", "A deal number is a whole number.")],
)  # fmt: skip
def test_a_long_deal_number_gets_the_same_words_as_a_short_one(
    client: TestClient, deal: str, said: str
) -> None:
    """A number typed far too long is refused as any number out of range is, in words, not
    with the form's field length."""
    response = browser_post(client, "/games", {"game": "corners", "deal": deal})
    assert response.status_code == 422
    assert said in response.text and "characters" not in response.text


# -- playing in the browser ------------------------------------------------------------------------


def _assert_fragment(response: Any, piles: set[str]) -> None:
    assert response.status_code == 200, response.text
    assert pile_ids(response.text) == piles
    assert response.text.count('id="game-status"') == 1
    assert "<html" not in response.text.lower()
    vary = [v.strip().lower() for v in response.headers.get("vary", "").split(",")]
    assert "hx-request" in vary


def test_htmx_move_undo_resign_return_fragments(client: TestClient, app: FastAPI) -> None:
    game_id = new_browser_game(client)
    url = f"/games/{game_id}"
    moved = browser_post(client, f"{url}/moves", {"from": "t5", "to": "t9", "version": "0"}, True)
    _assert_fragment(moved, {"t5", "t9"})
    moved = browser_post(client, f"{url}/moves", {"move": "stock-waste", "version": "1"}, True)
    _assert_fragment(moved, {"stock", "waste"})
    assert (
        browser_post(client, f"{url}/moves", {"move": "t8-t10", "version": "2"}).status_code == 303
    )
    undone = browser_post(client, f"{url}/undo", {}, True)
    _assert_fragment(undone, {"t8", "t10"})
    game = client.get(f"/api/games/{game_id}").json()
    assert (game["version"], game["moves"], game["undos"]) == (4, 3, 1)
    resigned = browser_post(client, f"{url}/resign", {}, True)
    assert resigned.status_code == 200
    assert 'id="game-status"' in resigned.text and "<html" not in resigned.text.lower()
    assert "hx-request" in resigned.headers["vary"].lower()
    assert client.get(f"/api/games/{game_id}").json()["status"] == "lost"


def test_without_htmx_every_action_redirects_to_the_board(client: TestClient) -> None:
    game_id = new_browser_game(client)
    url = f"/games/{game_id}"
    actions = [
        (f"{url}/moves", {"from": "t5", "to": "t9", "count": "1", "version": "0"}),
        (f"{url}/undo", {}),
        (f"{url}/moves", {"move": "t5-t9", "version": "2"}),
        (f"{url}/resign", {}),
    ]
    for version, (action, data) in enumerate(actions, start=1):
        response = browser_post(client, action, data)
        assert response.status_code == 303, response.text
        assert response.headers["location"] == url
        assert "hx-request" in response.headers.get("vary", "").lower()
        assert client.get(f"/api/games/{game_id}").json()["version"] == version
    assert client.get(url).status_code == 200


def test_refused_browser_moves_explain_and_restore_the_board(
    client: TestClient, app: FastAPI
) -> None:
    game_id = new_browser_game(client)
    url = f"/games/{game_id}"
    every_pile = set(GAMES["quadrangle"].pile_ids)
    before = snapshot(app, client, game_id)
    cases = [
        ({"from": "t1", "to": "t2", "version": "0"}, 422, "cannot go on"),  # illegal
        ({"from": "t5", "to": "t9", "version": "3"}, 409, "changed"),  # stale
        ({"from": "x1", "to": "t9", "version": "0"}, 422, "no pile"),  # unknown pile
        ({"move": "nonsense", "version": "0"}, 422, "not a move"),
    ]
    for data, status, words in cases:
        hx = browser_post(client, f"{url}/moves", data, True)
        assert hx.status_code == status, hx.text
        assert words in hx.text
        assert pile_ids(hx.text) == every_pile  # the whole board, right again
        assert 'id="game-status"' in hx.text
        assert "hx-request" in hx.headers["vary"].lower()
        plain = browser_post(client, f"{url}/moves", data)
        assert plain.status_code == 303 and plain.headers["location"] == url
        assert words in client.get(url).text  # the message is shown on the board once
        assert words not in client.get(url).text
    undo = browser_post(client, f"{url}/undo", {}, True)
    assert undo.status_code == 409 and pile_ids(undo.text) == every_pile
    assert snapshot(app, client, game_id) == before


def test_malformed_browser_moves_are_4xx(client: TestClient, app: FastAPI) -> None:
    game_id = new_browser_game(client)
    url = f"/games/{game_id}/moves"
    before = snapshot(app, client, game_id)
    forms = [
        {"from": "t5", "to": "t9"},  # no version
        {"from": "t5", "to": "t9", "version": "abc"},
        {"from": "t5", "to": "t9", "version": "-1"},
        {"from": "t5", "to": "t9", "version": "0", "count": "0"},
        {"from": "t5", "to": "t9", "version": "0", "count": "abc"},
        {"from": "t5", "to": "t9", "version": "0", "count": "9999999"},
        {"from": "t5", "to": "t9", "version": "0", "count": "²"},
        {"from": "t5", "to": "t9", "version": "²"},
        {"from": "t5", "version": "0"},
        {"version": "0"},
        {"from": "t5\x00", "to": "t9", "version": "0"},
        {"from": "t" * 50, "to": "t9", "version": "0"},
    ]
    for form in forms:
        for htmx in (False, True):
            response = browser_post(client, url, form, htmx)
            assert response.status_code < 500, (form, response.text)
            if not htmx:
                assert response.status_code != 200
    assert snapshot(app, client, game_id) == before


def test_browser_actions_on_others_and_unknown_games(client: TestClient, api: TestClient) -> None:
    theirs = start(api, "quadrangle", 1)["id"]
    for game_id, status in ((theirs, 403), ("nope", 404), ("x" * 100, 404)):
        for action, data in (
            ("moves", {"from": "t5", "to": "t9", "version": "0"}),
            ("undo", {}),
            ("resign", {}),
        ):
            for htmx in (False, True):
                response = browser_post(client, f"/games/{game_id}/{action}", data, htmx)
                assert response.status_code == status, (game_id, action, response.text)
    assert client.get(f"/api/games/{theirs}").json()["version"] == 0
    assert client.get("/games/nope").status_code == 404
    assert client.get(f"/games/{theirs}").status_code == 200  # anyone may look


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("multipart/form-data", b"x"), ("application/x-www-form-urlencoded", b"\xff")],
)
def test_unreadable_forms_are_not_server_errors(
    client: TestClient, content_type: str, body: bytes
) -> None:
    csrf(client)
    response = client.post("/games", content=body, headers={"content-type": content_type})
    assert response.status_code == 400


# -- pages ----------------------------------------------------------------------------------------


def test_home_lists_the_five_games(client: TestClient) -> None:
    home = client.get("/")
    assert home.status_code == 200
    for slug, rules in GAMES.items():
        assert rules.name in html.unescape(home.text)
        assert f'href="/rules/{slug}"' in home.text
        assert f'value="{slug}"' in home.text
    assert set(GAMES) == set(GAME_SLUGS)


@pytest.mark.parametrize("slug", GAME_SLUGS)
def test_deal_and_rules_pages(client: TestClient, slug: str) -> None:
    name = GAMES[slug].name
    for number in ("1", "424242", str(2**53 - 1)):
        deal = client.get(f"/deal/{slug}/{number}")
        assert deal.status_code == 200
        assert name in html.unescape(deal.text) and f"/rules/{slug}" in deal.text
        assert 'action="/games"' in deal.text and f'value="{number}"' in deal.text
    rules = client.get(f"/rules/{slug}")
    assert rules.status_code == 200
    assert name in html.unescape(rules.text)


@pytest.mark.parametrize(
    "path",
    ["/deal/klondike/1", "/deal/corners/0", f"/deal/corners/{2**53}", "/deal/corners/abc",
     "/deal/corners/-1", "/deal/corners/1.0", "/deal/corners/%C2%B2", "/deal/corners/%00",
     f"/deal/corners/{'9' * 40}", "/rules/klondike", "/rules/%00", "/games/nope", "/nowhere"],
)  # fmt: skip
def test_unknown_addresses_are_404_pages(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_fuzzed_browser_forms_never_cause_a_server_error(client: TestClient, app: FastAPI) -> None:
    import random

    game_id = new_browser_game(client)
    before = snapshot(app, client, game_id)
    rng = random.Random(7)
    values = ["", "0", "1", "-1", "²", "١", "9" * 30, "t5", "stock", "x\x00", "💥", "a" * 400,
              "t5-t9", "t5-t9/99", "Quadrangle", "' OR 1=1 --", "<b>", "%00", " 1 "]  # fmt: skip
    fields = ["game", "deal", "from", "to", "count", "version", "move", "name", "password"]
    routes = [f"/games/{game_id}/moves", f"/games/{game_id}/undo", "/games", "/signin",
              "/account/name", "/account/password", "/games/nope/moves"]  # fmt: skip
    for _ in range(60):
        form = {rng.choice(fields): rng.choice(values) for _ in range(rng.randint(0, 5))}
        if form.get("version") == "0":
            form["version"] = "1"  # never the current version: no move is legal
        if 8 <= len(form.get("password", "")) <= 256:
            form["password"] = "short"  # a valid password costs an argon2 hash: keep it quick
        route = rng.choice(routes)
        if route.endswith("/undo"):
            continue  # the one route where an empty form is a valid request
        response = browser_post(client, route, form, htmx=rng.random() < 0.5)
        assert response.status_code < 500, (route, form, response.text)
    after = snapshot(app, client, game_id)
    for state in (before, after):
        del state["public"]["player"]  # a fuzzed form may well have chosen a new name
    assert after == before
