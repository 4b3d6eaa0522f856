"""Helpers shared by the web tests: starting games, moving, and reading back what was stored."""

from __future__ import annotations

import re
from typing import Any
from weakref import WeakKeyDictionary

import httpx2 as httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.models import Game, MoveRecord
from app.services.solver import Solver

GAME_SLUGS = ("quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs")
PILE_ID_RE = re.compile(r'id="pile-([a-z0-9]+)"')
CSRF_RE = re.compile(r'name="csrftoken" value="([^"]+)"')
# client → the CSRF token its session was issued. Weak keys, not ids: a new client can get a
# collected one's id, and would then send that session's token ("Form expired", 403).
_TOKENS: WeakKeyDictionary[TestClient, str] = WeakKeyDictionary()


def csrf(client: TestClient, fresh: bool = False) -> str:
    """The CSRF token of a browser client's session, read from a page as a browser gets it.

    The token belongs to the session, so it stays the same until the session is replaced
    (sign-in, sign-out): ``browser_post`` forgets it then."""
    token = None if fresh else _TOKENS.get(client)
    if token is None:
        page = client.get("/account")
        assert page.status_code == 200, page.text
        found = CSRF_RE.search(page.text)
        assert found, "no CSRF token on the account page"
        token = _TOKENS[client] = found.group(1)
    return token


def forget_csrf(client: TestClient) -> None:
    _TOKENS.pop(client, None)


def browser_post(
    client: TestClient, url: str, data: dict[str, str], htmx: bool = False
) -> httpx.Response:
    """A form post with this browser's CSRF token, as the page's form would send it."""
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.post(
        url, data={**data, "csrftoken": csrf(client)}, headers=headers, follow_redirects=False
    )
    if url in ("/signin", "/signout"):
        forget_csrf(client)  # a new session, a new token
    return response


def start(api: TestClient, game: str = "quadrangle", deal: int = 1) -> dict[str, Any]:
    response = api.post("/api/games", json={"game": game, "deal": deal})
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def new_player(client: TestClient, name: str | None = None) -> dict[str, str]:
    """Another API player: the ``Authorization`` header that acts as them."""
    response = client.post("/api/players", json={"name": name} if name else {})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def start_as(
    client: TestClient, auth: dict[str, str], game: str = "quadrangle", deal: int = 1
) -> dict[str, Any]:
    response = client.post("/api/games", json={"game": game, "deal": deal}, headers=auth)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def new_game(client: TestClient, slug: str, deal: int = 1) -> str:
    answer = client.post(
        "/games",
        data={"game": slug, "deal": str(deal), "csrftoken": csrf(client)},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    return str(answer.headers["location"]).rsplit("/", 1)[1]


def post(
    client: TestClient, url: str, data: dict[str, str], htmx: bool = True
) -> Any:  # an httpx2 response
    return client.post(
        url,
        data={**data, "csrftoken": csrf(client)},
        headers={"HX-Request": "true"} if htmx else {},
        follow_redirects=False,
    )


def finish_deal(client: TestClient, slug: str, deal: int) -> str:
    """The browser player plays the deal and resigns: from now on they have finished it, so
    the deal's replays are open to them (the same-deal rule)."""
    game_id = new_game(client, slug, deal)
    assert post(client, f"/games/{game_id}/resign", {}).status_code == 200
    return game_id


def move(
    api: TestClient,
    game_id: str,
    notation: str,
    version: int,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    pair, _, count = notation.partition("/")
    source, target = pair.split("-")
    body = {"from": source, "to": target, "count": int(count or 1), "version": version}
    return api.post(f"/api/games/{game_id}/moves", json=body, headers=headers or {})


def error_code(response: httpx.Response, status: int) -> str:
    """The error code of a refusal, after checking its status and the contract's error shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert {"code", "message"} <= set(body["error"]), body
    assert isinstance(body["error"]["code"], str) and body["error"]["code"]
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    code: str = body["error"]["code"]
    return code


def log_rows(app: FastAPI, game_id: str) -> list[tuple[int, str, str | None]]:
    """The stored move log: (seq, action, notation) in order."""
    with app.state.services.sessions() as db:
        rows = db.execute(
            select(MoveRecord.seq, MoveRecord.action, MoveRecord.notation)
            .where(MoveRecord.game_id == game_id)
            .order_by(MoveRecord.seq)
        ).all()
    return [(r[0], r[1], r[2]) for r in rows]


def stored_game(app: FastAPI, game_id: str) -> tuple[int, str, str, int]:
    """The stored row's version, status, serialized state and move count."""
    with app.state.services.sessions() as db:
        record = db.get(Game, game_id)
        assert record is not None
        return record.version, record.status, record.state, record.moves


def snapshot(app: FastAPI, client: TestClient, game_id: str) -> dict[str, Any]:
    """Everything a rejected request must leave alone: the public state, the row, the log."""
    public = client.get(f"/api/games/{game_id}")
    assert public.status_code == 200, public.text
    return {
        "public": public.json(),
        "stored": stored_game(app, game_id),
        "log": log_rows(app, game_id),
    }


def pile_ids(html: str) -> set[str]:
    return set(PILE_ID_RE.findall(html))


def stored_deal(app: FastAPI, game_id: str) -> int:
    """A game's deal number as the server stores it: the answers hide a sealed one."""
    with app.state.services.sessions() as db:
        record = db.get(Game, game_id)
        assert record is not None
        return int(record.deal)


def solver_of(app: FastAPI) -> Solver:
    solver: Solver = app.state.services.solver
    return solver
