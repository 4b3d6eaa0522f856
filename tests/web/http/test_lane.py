"""The moves' lane (app/web/http/lane.py): a move served in one layer is answered as the whole
stack answers it, byte for byte and header for header, the API's and the board's; what the
lane does not take goes through the stack; the lane logs, counts and takes its turns as the
stack does.

Each case is sent twice, to two players' games of the same deal: once as the app serves it,
once with the lane left out of the middleware stack. A spy on the lane says whether it took
the first.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.main import create_app
from app.services.errors import NotFound
from app.web.http.lane import MoveLane
from app.web.http.limits import Admission
from tests.aio import run
from tests.waiting import wait_until
from tests.web.answers import check_answer
from tests.web.hidden import HiddenCardGuard
from tests.web.support import csrf, error_code, new_game, new_player, start_as

GOOD = {"from": "t5", "to": "t9", "count": 1, "version": 0}  # quadrangle deal 1


def _lane(app: FastAPI) -> tuple[Any, MoveLane]:
    """The layer above the lane in the built stack, and the lane."""
    if app.middleware_stack is None:
        app.middleware_stack = app.build_middleware_stack()
    above: Any = app.middleware_stack
    while not isinstance(above.app, MoveLane):
        above = above.app
    return above, above.app


@contextmanager
def without_lane(app: FastAPI) -> Iterator[None]:
    above, lane = _lane(app)
    above.app = lane.app
    try:
        yield
    finally:
        above.app = lane


@pytest.fixture()
def served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the requests the lane took (served or refused) itself."""
    paths: list[str] = []
    original = MoveLane._take

    async def spy(self: MoveLane, scope: Scope, *args: Any) -> None:
        paths.append(scope["path"])
        await original(self, scope, *args)

    monkeypatch.setattr(MoveLane, "_take", spy)
    return paths


def _sent(
    app: FastAPI,
    served: list[str],
    lane: bool,
    lane_serves: bool,
    send: Callable[[], httpx.Response],
) -> httpx.Response:
    """``send()`` with the lane in the stack (checking whether it took the request) or left
    out of it."""
    served.clear()
    if lane:
        response = send()
        assert bool(served) == lane_serves, served
        return response
    with without_lane(app):
        response = send()
    assert not served
    return response


Sender = Callable[[TestClient, str, dict[str, str]], httpx.Response]


def _json(body: Any, **headers: str) -> Sender:
    def send(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
        return client.post(path, json=body, headers={**auth, **headers})

    return send


def _raw(content: bytes, content_type: str | None, **headers: str) -> Sender:
    def send(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
        kind = {"content-type": content_type} if content_type else {}
        return client.post(path, content=content, headers={**auth, **kind, **headers})

    return send


def _chunked(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
    def chunks() -> Iterator[bytes]:  # no Content-Length
        yield b'{"from":"t5","to":"t9",'
        yield b'"version":0}'

    return client.post(path, content=chunks(), headers={**auth, "content-type": "application/json"})


def _anonymous(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
    return client.post(path, json=GOOD)


def _stranger(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
    return client.post(path, json=GOOD, headers={"authorization": "Bearer not-a-token"})


def _twice(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
    first = client.post(path, json=GOOD, headers={**auth, "idempotency-key": "again-1"})
    assert first.status_code == 200
    return client.post(path, json=GOOD, headers={**auth, "idempotency-key": "again-1"})


def _other_method(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
    return client.put(path, json=GOOD, headers=auth)


def _longer_path(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
    return client.post(path + "/more", json=GOOD, headers=auth)


# (what is sent, whether the lane serves it)
CASES: dict[str, tuple[Sender, bool]] = {
    "a good move": (_json(GOOD), True),
    "an illegal move (422)": (_json({**GOOD, "to": "f1"}), True),
    "a stale version (409)": (_json({**GOOD, "version": 7}), True),
    "no token (401)": (_anonymous, True),
    "an unknown token (401)": (_stranger, True),
    "a retry with the same key": (_twice, True),
    "the client's request id": (_json(GOOD, **{"x-request-id": "req-42.a:b"}), True),
    "a request id that is not one": (_json(GOOD, **{"x-request-id": "no spaces please"}), True),
    "no gzip": (_json(GOOD, **{"accept-encoding": "identity"}), True),
    "in French": (_json({**GOOD, "to": "f1"}, **{"accept-language": "fr"}), True),
    "not JSON: FastAPI's 422": (_raw(b"from=t5", "application/json"), True),
    "no version: FastAPI's 422": (_json({"from": "t5", "to": "t9"}), True),
    "a text body: FastAPI's binding": (_raw(b"{}", "text/plain"), True),
    "a long Idempotency-Key": (_json(GOOD, **{"idempotency-key": "k" * 101}), True),
    "a body over the limit (413)": (_json({**GOOD, "padding": "x" * 70_000}), False),
    "headers over the limit (431)": (_json(GOOD, **{"x-padding": "x" * 20_000}), False),
    "a body of unknown length": (_chunked, False),
    "another method (405)": (_other_method, False),
    "a longer path (404)": (_longer_path, False),
}


def _answer(response: httpx.Response, game_id: str, given_id: bool) -> dict[str, Any]:
    """Status, headers in order and the body, with what differs between two players' games
    taken out: the game's and the player's ids, the start time, a request id the server made,
    and so the body's length (checked against the body sent instead)."""
    assert int(response.headers["content-length"]) == response.num_bytes_downloaded
    headers = [
        (name, "…" if name == "content-length" else value)
        for name, value in response.headers.multi_items()
        if not (name == "x-request-id" and not given_id)
    ]
    body: Any = response.content.replace(game_id.encode(), b"GAME")
    if response.headers.get("content-type") == "application/json":
        body = json.loads(body)
        if isinstance(body, dict):
            body = {k: v for k, v in body.items() if k not in ("id", "player", "started_at")}
    return {"status": response.status_code, "headers": headers, "body": body}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_move_is_answered_as_the_whole_stack_answers_it(
    app: FastAPI, client: TestClient, served: list[str], case: str
) -> None:
    send, lane_serves = CASES[case]
    answers = []
    for lane in (True, False):
        auth = new_player(client)
        game_id = start_as(client, auth)["id"]
        path = f"/api/games/{game_id}/moves"
        response = _sent(app, served, lane, lane_serves, partial(send, client, path, auth))
        given = "req-42" in str(response.request.headers.get("x-request-id"))
        answers.append(_answer(response, game_id, given))
    assert answers[0] == answers[1]


# -- the board's move -------------------------------------------------------------------------

GOOD_FORM = {"move": "t5-t9", "version": "0"}


def _form(
    fields: dict[str, str], token: bool = True, headers: dict[str, str] | None = None
) -> BoardSender:
    def send(browser: TestClient, path: str) -> httpx.Response:
        data = {**fields, "csrftoken": csrf(browser)} if token else fields
        return browser.post(path, data=data, headers={"HX-Request": "true", **(headers or {})})

    return send


def _no_htmx(browser: TestClient, path: str) -> httpx.Response:
    return browser.post(
        path, data={**GOOD_FORM, "csrftoken": csrf(browser)}, follow_redirects=False
    )


def _multipart(browser: TestClient, path: str) -> httpx.Response:
    return browser.post(
        path,
        data={**GOOD_FORM, "csrftoken": csrf(browser)},
        files={"unused": ("a.txt", b"x", "text/plain")},
        headers={"HX-Request": "true"},
    )


BoardSender = Callable[[TestClient, str], httpx.Response]
BOARD_CASES: dict[str, tuple[BoardSender, bool]] = {
    "a good move": (_form(GOOD_FORM), True),
    "the deal button": (_form({"move": "deal", "version": "0"}), True),
    "an illegal move": (_form({"move": "t5-f1", "version": "0"}), True),
    "a stale version": (_form({"move": "t5-t9", "version": "7"}), True),
    "no version: FastAPI's 422": (_form({"move": "t5-t9"}), True),
    "no CSRF token (403)": (_form(GOOD_FORM, token=False), True),
    "from another site (403)": (_form(GOOD_FORM, headers={"sec-fetch-site": "cross-site"}), True),
    "in French": (
        _form({"move": "t5-f1", "version": "0"}, headers={"accept-language": "fr"}),
        True,
    ),
    "without htmx: a redirect": (_no_htmx, True),
    "multipart: FastAPI's binding": (_multipart, True),
    "a body over the limit (413)": (_form({**GOOD_FORM, "x": "y" * 70_000}), False),
}


def _board_answer(response: httpx.Response, game_id: str, token: str) -> dict[str, Any]:
    """As :func:`_answer`, for the board: the session cookie's value (its attributes kept) and
    the clock a refusal's board shows also differ between two browsers."""
    length = response.headers.get("content-length")
    assert length is None or int(length) == response.num_bytes_downloaded
    headers = [
        (name, "…" if name == "content-length" else value)
        for name, value in response.headers.multi_items()
        if name != "x-request-id"
    ]
    headers = [
        (name, value.partition(";")[2] if name == "set-cookie" else value.replace(game_id, "GAME"))
        for name, value in headers
    ]
    text = response.text.replace(game_id, "GAME").replace(token, "TOKEN")
    text = re.sub(r'datetime="[^"]*"|data-elapsed="[^"]*"', "", text)
    return {"status": response.status_code, "headers": headers, "body": text}


def _as_served(app: FastAPI) -> ASGIApp:
    """``app`` without the test client's ``http.response.debug`` extension, for which a page
    sends its template first, before its answer (uvicorn offers no such thing): the stack's gzip
    then takes Starlette's own responder, which orders its headers otherwise."""

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            extensions = dict(scope.get("extensions") or {})
            extensions.pop("http.response.debug", None)
            scope = {**scope, "extensions": extensions}
        await app(scope, receive, send)

    return served


@pytest.mark.parametrize("case", sorted(BOARD_CASES))
def test_a_board_move_is_answered_as_the_whole_stack_answers_it(
    app: FastAPI, guard: HiddenCardGuard, served: list[str], case: str
) -> None:
    send, lane_serves = BOARD_CASES[case]
    answers = []
    for lane in (True, False):
        with TestClient(_as_served(app), base_url="http://testserver") as browser:
            browser.event_hooks["response"] += [guard.check, check_answer]
            game_id = new_game(browser, "quadrangle", 1)
            token = csrf(browser)
            path = f"/games/{game_id}/moves"
            response = _sent(app, served, lane, lane_serves, partial(send, browser, path))
            answers.append(_board_answer(response, game_id, token))
    assert answers[0] == answers[1]


def test_what_the_lane_answers_is_what_the_contract_says(
    api: TestClient, served: list[str]
) -> None:
    game_id = start_as(api, {})["id"]
    path = f"/api/games/{game_id}/moves"
    moved = api.post(path, json=GOOD, headers={"x-request-id": "mine-1"})
    assert moved.status_code == 200 and moved.json()["version"] == 1
    assert moved.headers["x-request-id"] == "mine-1"
    assert moved.headers["content-encoding"] == "gzip"
    assert moved.headers["vary"] == "Accept-Encoding"
    assert moved.headers["content-language"] == "en"
    assert "frame-ancestors 'none'" in moved.headers["content-security-policy"]
    assert error_code(api.post(path, json=GOOD), 409) == "stale_version"
    french = api.post(
        path, json={**GOOD, "to": "f1", "version": 1}, headers={"accept-language": "fr"}
    )
    assert error_code(french, 422) == "illegal_move"
    assert french.headers["content-language"] == "fr"
    assert served == [path] * 3


def test_a_move_the_lane_serves_is_logged_and_counted(
    api: TestClient, served: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    labels = {"method": "POST", "route": "/api/games/{game_id}/moves", "status": "200"}
    before = REGISTRY.get_sample_value("ph_requests_total", labels) or 0.0
    game_id = start_as(api, {})["id"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="patience_hall.access"):
        moved = api.post(f"/api/games/{game_id}/moves", json=GOOD)
    assert moved.status_code == 200 and served
    lines = [r for r in caplog.records if r.name == "patience_hall.access"]
    assert len(lines) == 1
    fields = lines[0].fields  # type: ignore[attr-defined]
    assert fields["request_id"] == moved.headers["x-request-id"]
    assert fields["route"] == "/api/games/{game_id}/moves"
    assert fields["path"] == f"/api/games/{game_id}/moves"
    assert fields["status"] == 200 and fields["ms"] >= 0
    assert REGISTRY.get_sample_value("ph_requests_total", labels) == before + 1


def test_an_unexpected_error_is_a_500_logged_as_one_either_way(
    app: FastAPI,
    served: list[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(app.state.services.games, "move_async", broken)
    answers = []
    with TestClient(app, raise_server_exceptions=False) as c:
        for lane in (True, False):
            auth = new_player(c)
            path = f"/api/games/{start_as(c, auth)['id']}/moves"
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="patience_hall.access"):
                if lane:
                    response = c.post(path, json=GOOD, headers=auth)
                else:
                    with without_lane(app):
                        response = c.post(path, json=GOOD, headers=auth)
            logged = [
                r.fields["status"]  # type: ignore[attr-defined]
                for r in caplog.records
                if r.name == "patience_hall.access"
            ]
            answers.append((response.status_code, response.text, logged))
    assert served  # the first went through the lane
    assert answers[0] == answers[1]
    assert answers[0][0] == 500 and answers[0][2] == [500]


@pytest.fixture()
def one_thread(db_url: str) -> Iterator[FastAPI]:
    application = create_app(
        Settings(
            app_env="test",
            database_url=db_url,
            threadpool_size=1,
            queue_timeout_ms=100,
            enforce_retry_after=False,  # no real-time hold of a second refusal
        )
    )
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


def test_a_move_waits_for_the_same_turns_as_every_other_request(
    one_thread: FastAPI, monkeypatch: pytest.MonkeyPatch, served: list[str]
) -> None:
    """With every turn of the worker's gate held by other requests, a move the lane serves is
    answered 503 after the queue's wait, as the stack answers it: the lane and the stack take
    their turns at one gate."""
    gate_open = threading.Event()

    def held(*_: Any, **__: Any) -> Any:
        gate_open.wait(10)
        raise NotFound("There is no game with that id.")

    turns = 4 * one_thread.state.settings.threadpool_size
    with TestClient(one_thread) as c, ThreadPoolExecutor(turns) as pool:
        auth = new_player(c)
        game_id = start_as(c, auth)["id"]
        monkeypatch.setattr(one_thread.state.services.games, "get", held)
        try:
            waiting = [pool.submit(c.get, f"/api/games/held{i:02}") for i in range(turns)]
            wait_until(lambda: _every_turn_taken(one_thread), "every turn taken")
            refused = c.post(f"/api/games/{game_id}/moves", json=GOOD, headers=auth)
        finally:
            gate_open.set()
        assert [f.result(timeout=60).status_code for f in waiting] == [404] * turns
    assert served == [f"/api/games/{game_id}/moves"]
    assert error_code(refused, 503) == "unavailable"
    assert int(refused.headers["retry-after"]) >= 1
    assert "x-request-id" in refused.headers and "content-security-policy" in refused.headers


def _every_turn_taken(application: FastAPI) -> bool:
    layer: Any = application.middleware_stack
    while not isinstance(layer, Admission):
        layer = layer.app
    made = list(layer._gates.values())
    return bool(made) and all(gates.general.locked() for gates in made)


def test_an_answer_in_pieces_is_headed_and_passed_on_as_it_comes(app: FastAPI) -> None:
    """Every answer of the route is one piece; should one come in pieces, it goes out as it
    comes, with the lane's headers and uncompressed (no part is held back)."""
    _, lane = _lane(app)
    sent: list[Message] = []

    async def pieces(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"a" * 600, "more_body": True})
        await send({"type": "http.response.body", "body": b"b" * 600})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http", "method": "POST", "path": "/api/games/" + "g" * 22 + "/moves",
        "raw_path": b"", "query_string": b"", "root_path": "", "state": {},
        "client": ("127.0.0.1", 1), "server": ("testserver", 80), "scheme": "http",
        "headers": [(b"content-length", b"2"), (b"accept-encoding", b"gzip")],
    }  # fmt: skip
    lane._serve = pieces  # type: ignore[method-assign]
    lane._lanes = None  # the routes' lanes made again, with this in the route's place
    try:
        run(lane(scope, receive, send))
    finally:
        del lane._serve
        lane._lanes = None
    assert [m["type"] for m in sent] == ["http.response.start"] + ["http.response.body"] * 2
    names = [name for name, _ in sent[0]["headers"]]
    assert b"x-request-id" in names and b"content-security-policy" in names
    assert b"content-encoding" not in names
    assert b"".join(m["body"] for m in sent[1:]) == b"a" * 600 + b"b" * 600


@pytest.fixture()
def secure(db_url: str) -> Iterator[FastAPI]:
    application = create_app(Settings(app_env="test", database_url=db_url, cookie_secure=True))
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


def test_a_board_move_over_plain_http_gets_the_stacks_page_asking_for_https(
    secure: FastAPI, served: list[str]
) -> None:
    path = "/games/" + "g" * 22 + "/moves"
    with TestClient(secure, base_url="http://hall.example") as plain:
        answer = plain.post(path, data=GOOD_FORM, headers={"HX-Request": "true"})
    assert answer.status_code == 400 and "hall.example" in answer.text
    assert served == []
    with TestClient(secure, base_url="https://hall.example") as tls:
        refused = tls.post(path, data=GOOD_FORM, headers={"HX-Request": "true"})
    assert refused.status_code == 403  # no session, so no CSRF token: refused in the lane
    assert served == [path]


@pytest.mark.parametrize("path", ["/api/games/{}/moves", "/games/{}/moves"])
def test_the_lane_takes_a_move_to_the_route_the_router_would_take_it_to(
    app: FastAPI, path: str
) -> None:
    _, lane = _lane(app)
    lanes = lane._ready()
    for game_id in ("g" * 22, "abc", "x.y-z_1"):
        scope = {"type": "http", "method": "POST", "path": path.format(game_id), "root_path": ""}
        first = next(r for r in app.router.routes if r.matches(scope)[0] is Match.FULL)
        taken = next(one.route for one in lanes if one.route.matches(scope)[0] is Match.FULL)
        assert taken is first
