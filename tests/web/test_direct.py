"""Moves bound directly (app/web/direct.py): the request every client sends skips FastAPI's
general binding, and answers as FastAPI's binding answers; every other request is FastAPI's
own, unchanged.

Each case is sent twice, to two players' games of the same deal: once as the app serves it,
once with the move routes on FastAPI's binding alone, and the two answers must agree; a spy
on the binders says whether the first was taken by its binder or left to FastAPI.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager, nullcontext
from typing import Any

import fastapi.routing
import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from app.db.models import Player
from app.web.direct import (
    FORM_MAX_FIELDS,
    Binder,
    bind_directly,
    binder_of,
    binds,
    media_type,
    text_field,
    unbind,
    urlencoded_form,
)
from tests.aio import run
from tests.web.answers import check_answer
from tests.web.hidden import HiddenCardGuard
from tests.web.support import csrf, new_game, new_player, start_as

GOOD_API_MOVE = {"from": "t5", "to": "t9", "count": 1, "version": 0}  # quadrangle deal 1
GOOD_FORM = {"move": "t5-t9", "version": "0"}


@contextmanager
def fastapi_binding_only(app: FastAPI) -> Iterator[None]:
    routes = [r for r in app.router.routes if isinstance(r, APIRoute) and binder_of(r)]
    for route in routes:
        unbind(route)
    try:
        yield
    finally:
        for route in routes:
            bind_directly(route)


@pytest.fixture()
def app_client(app: FastAPI, guard: HiddenCardGuard) -> Iterator[Callable[[], TestClient]]:
    """New browsers (each its own cookies) on the suite's app, closed at the end."""
    opened: list[TestClient] = []

    def new() -> TestClient:
        browser = TestClient(app, base_url="http://testserver")
        browser.__enter__()
        browser.event_hooks["response"] += [guard.check, check_answer]
        opened.append(browser)
        return browser

    yield new
    for browser in opened:
        browser.__exit__(None, None, None)


@pytest.fixture()
def taken(app: FastAPI) -> Iterator[list[bool]]:
    """Whether the binder took each move request it saw (False: left to FastAPI's binding)."""
    seen: list[bool] = []
    originals: list[tuple[APIRoute, Binder]] = []
    for route in app.router.routes:
        if isinstance(route, APIRoute) and (found := binder_of(route)) is not None:
            originals.append((route, found))
    for route, binder in originals:

        async def spy(request: Request, binder: Binder = binder) -> Response | None:
            try:
                response = await binder(request)
            except Exception:
                seen.append(True)  # taken, and the route refused it (a 401, a 409, …)
                raise
            seen.append(response is not None)
            return response

        binds(route.endpoint)(spy)
        bind_directly(route)
    try:
        yield seen
    finally:
        for route, binder in originals:
            binds(route.endpoint)(binder)
            bind_directly(route)


@pytest.fixture()
def solved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The move paths FastAPI's dependency solving ran for."""
    paths: list[str] = []
    original = fastapi.routing.solve_dependencies  # type: ignore[attr-defined]

    async def counting(*args: Any, **kwargs: Any) -> Any:
        path = kwargs["request"].url.path
        if path.endswith("/moves"):
            paths.append(path)
        return await original(*args, **kwargs)

    monkeypatch.setattr(fastapi.routing, "solve_dependencies", counting)
    return paths


def test_the_two_move_routes_and_no_other_are_bound_directly(app: FastAPI) -> None:
    bound = {
        (method, route.path)
        for route in app.router.routes
        if isinstance(route, APIRoute) and binder_of(route)
        for method in route.methods or ()
    }
    assert bound == {("POST", "/api/games/{game_id}/moves"), ("POST", "/games/{game_id}/moves")}


# -- the API's move ---------------------------------------------------------------------------

Send = Callable[[TestClient, str, dict[str, str]], httpx.Response]


def _json_move(body: Any, **headers: str) -> Send:
    def send(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
        return client.post(path, json=body, headers={**auth, **headers})

    return send


def _raw_move(content: bytes, content_type: str, **headers: str) -> Send:
    def send(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
        return client.post(
            path, content=content, headers={**auth, "content-type": content_type, **headers}
        )

    return send


def _no_token(body: Any) -> Send:
    def send(client: TestClient, path: str, auth: dict[str, str]) -> httpx.Response:
        return client.post(path, json=body)

    return send


# (what is sent, whether the binder takes it)
API_CASES: dict[str, tuple[Send, bool]] = {
    "a good move": (_json_move(GOOD_API_MOVE), True),
    "with an Idempotency-Key": (_json_move(GOOD_API_MOVE, **{"Idempotency-Key": "k-1"}), True),
    "a charset in the content type": (
        _raw_move(b'{"from":"t5","to":"t9","version":0}', "application/json; charset=utf-8"),
        True,
    ),
    "an illegal move": (_json_move({**GOOD_API_MOVE, "to": "f1"}), True),
    "a stale version": (_json_move({**GOOD_API_MOVE, "version": 7}), True),
    "an unknown field, ignored": (_json_move({**GOOD_API_MOVE, "colour": "red"}), True),
    "no token": (_no_token(GOOD_API_MOVE), True),
    "a whole float version": (_json_move({**GOOD_API_MOVE, "version": 0.0}), True),
    "a version as text": (_json_move({**GOOD_API_MOVE, "version": "0"}), False),
    "a version below zero": (_json_move({**GOOD_API_MOVE, "version": -1}), False),
    "no version": (_json_move({"from": "t5", "to": "t9"}), False),
    "a pile id that is no pile id": (_json_move({**GOOD_API_MOVE, "to": "t99x"}), False),
    "a list": (_json_move([GOOD_API_MOVE]), False),
    "not JSON": (_raw_move(b"from=t5", "application/json"), False),
    "an empty body": (_raw_move(b"", "application/json"), False),
    "a text content type": (_raw_move(b'{"from":"t5","to":"t9","version":0}', "text/plain"), False),
    "an empty Idempotency-Key": (_json_move(GOOD_API_MOVE, **{"Idempotency-Key": ""}), False),
    "a long Idempotency-Key": (_json_move(GOOD_API_MOVE, **{"Idempotency-Key": "k" * 101}), False),
    "no token and not JSON": (_no_token("t5-t9"), False),
}


def _api_answer(response: httpx.Response, game_id: str) -> tuple[int, Any, str | None]:
    body = response.json() if response.content else None
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in ("id", "player", "started_at")}
    text = response.text.replace(game_id, "GAME")
    return (
        response.status_code,
        body if isinstance(body, dict) else text,
        response.headers.get("idempotent-replayed"),
    )


@pytest.mark.parametrize("case", sorted(API_CASES))
def test_an_api_move_is_answered_as_fastapis_binding_answers(
    app: FastAPI, client: TestClient, taken: list[bool], case: str
) -> None:
    send, takes = API_CASES[case]
    answers = []
    for direct in (True, False):
        auth = new_player(client)
        game_id = start_as(client, auth)["id"]
        path = f"/api/games/{game_id}/moves"
        if direct:
            response = send(client, path, auth)
        else:
            with fastapi_binding_only(app):
                response = send(client, path, auth)
        answers.append(_api_answer(response, game_id))
    assert taken == [takes]  # seen once: the second request went around the binder
    assert answers[0] == answers[1]


def test_a_retry_with_the_same_key_replays_the_first_answer(
    client: TestClient, taken: list[bool], solved: list[str]
) -> None:
    """Both bound directly: FastAPI's dependency solving never ran."""
    auth = new_player(client)
    game_id = start_as(client, auth)["id"]
    headers = {**auth, "Idempotency-Key": "same"}
    path = f"/api/games/{game_id}/moves"
    first = client.post(path, json=GOOD_API_MOVE, headers=headers)
    again = client.post(path, json=GOOD_API_MOVE, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
    assert taken == [True, True]
    assert solved == []


# -- the board's move -------------------------------------------------------------------------

FORM_CASES: dict[str, tuple[dict[str, str], bool]] = {
    "a good move": (GOOD_FORM, True),
    "from and to": ({"from": "t5", "to": "t9", "count": "1", "version": "0"}, True),
    "an empty count is one card": ({"from": "t5", "to": "t9", "count": "", "version": "0"}, True),
    "a move and empty from and to": ({**GOOD_FORM, "from": "", "to": ""}, True),
    "the deal button": ({"move": "deal", "version": "0"}, True),
    "an illegal move": ({"move": "t5-f1", "version": "0"}, True),
    "a stale version": ({"move": "t5-t9", "version": "7"}, True),
    "leading zeros": ({"move": "t5-t9", "version": "000"}, True),
    "spaces around the version": ({"move": "t5-t9", "version": " 0 "}, True),
    "a 20-digit version": ({"move": "t5-t9", "version": "9" * 20}, True),
    "a count that is no number": ({"from": "t5", "to": "t9", "count": "x", "version": "0"}, True),
    "no version": ({"move": "t5-t9"}, False),
    "an empty version": ({"move": "t5-t9", "version": ""}, False),
    "a version that is no number": ({"move": "t5-t9", "version": "v0"}, False),
    "a version below zero": ({"move": "t5-t9", "version": "-1"}, False),
    "a long pile id": ({"from": "t5" * 9, "to": "t9", "version": "0"}, False),
    "a long count": ({"from": "t5", "to": "t9", "count": "1234567", "version": "0"}, False),
    "a long notation": ({"move": "t5-t9/" + "1" * 20, "version": "0"}, False),
}


def _board_answer(response: httpx.Response, game_id: str, token: str) -> tuple[int, str, str]:
    text = response.text.replace(game_id, "GAME").replace(token, "TOKEN")
    # A refusal's board shows the clock, which ticks between the two requests.
    text = re.sub(r'datetime="[^"]*"|data-elapsed="[^"]*"', "", text)
    return response.status_code, text, response.headers.get("location", "")


@pytest.mark.parametrize("case", sorted(FORM_CASES))
def test_a_board_move_is_answered_as_fastapis_binding_answers(
    app: FastAPI, app_client: Callable[[], TestClient], taken: list[bool], case: str
) -> None:
    form, takes = FORM_CASES[case]
    answers = []
    for direct in (True, False):
        browser = app_client()
        game_id = new_game(browser, "quadrangle", 1)
        token = csrf(browser)
        path = f"/games/{game_id}/moves"
        data = {**form, "csrftoken": token}
        if direct:
            response = browser.post(path, data=data, headers={"HX-Request": "true"})
        else:
            with fastapi_binding_only(app):
                response = browser.post(path, data=data, headers={"HX-Request": "true"})
        answers.append(_board_answer(response, game_id, token))
    assert taken == [takes]
    assert answers[0] == answers[1]


def test_a_multipart_board_move_is_left_to_fastapi(
    client: TestClient, taken: list[bool], solved: list[str]
) -> None:
    game_id = new_game(client, "quadrangle", 1)
    path = f"/games/{game_id}/moves"
    fields = {**GOOD_FORM, "csrftoken": csrf(client)}
    response = client.post(
        path,
        data=fields,
        files={"unused": ("a.txt", b"x", "text/plain")},  # makes it multipart/form-data
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert taken == [False]
    assert solved == [path]


def _gone_mid_body(app: FastAPI, path: str, headers: dict[str, str], kind: str) -> int:
    """The status answered to a client that sends half its body and goes away."""
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw += [(b"host", b"testserver"), (b"content-type", kind.encode()), (b"content-length", b"80")]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": raw, "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"from": "t5", "to"', "more_body": True},
    ]
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def call() -> None:
        await app(scope, receive, send)

    run(call())
    return statuses[0]


def test_a_client_gone_mid_body_gets_fastapis_answer(
    app: FastAPI, client: TestClient, taken: list[bool]
) -> None:
    """No 500: the binder declines a body it could not read, and FastAPI answers it as it did."""
    auth = new_player(client)
    api_path = f"/api/games/{start_as(client, auth)['id']}/moves"
    board_path = f"/games/{new_game(client, 'quadrangle', 1)}/moves"
    browser = {
        "x-csrftoken": csrf(client),
        "cookie": f"ph_session={client.cookies['ph_session']}",
        "sec-fetch-site": "same-origin",
    }
    answers = []
    for direct in (True, False):
        with nullcontext() if direct else fastapi_binding_only(app):
            answers.append(
                (
                    _gone_mid_body(app, api_path, auth, "application/json"),
                    _gone_mid_body(app, board_path, browser, "application/x-www-form-urlencoded"),
                )
            )
    assert answers[0] == answers[1]
    assert all(400 <= status < 500 for status in answers[0]), answers  # FastAPI's 422: no body
    assert taken == [False, False]


def _players(app: FastAPI) -> int:
    with app.state.services.engine.connect() as db:
        return int(db.execute(select(func.count()).select_from(Player)).scalar_one())


@pytest.mark.parametrize("form", [GOOD_FORM, {"move": "t5-t9", "version": "x"}])
def test_a_new_browser_becomes_one_player_whichever_binding_answers(
    app: FastAPI, client: TestClient, app_client: Callable[[], TestClient], form: dict[str, str]
) -> None:
    """The binder declines before any dependency runs, so FastAPI's binding, which makes the
    anonymous player of a browser that acts for the first time, is not run after it did."""
    game_id = new_game(client, "quadrangle", 1)
    stranger = app_client()
    token = csrf(stranger)  # a session, no player yet
    before = _players(app)
    response = stranger.post(
        f"/games/{game_id}/moves", data={**form, "csrftoken": token}, headers={"HX-Request": "true"}
    )
    assert response.status_code in (403, 422)  # not theirs, or not a version
    assert _players(app) == before + 1


# -- the helpers ------------------------------------------------------------------------------


def _request(content_type: str | None) -> Request:
    headers = [] if content_type is None else [(b"content-type", content_type.encode())]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": headers})


@pytest.mark.parametrize(
    ("given", "media"),
    [
        ("application/json", "application/json"),
        ("Application/JSON; charset=utf-8", "application/json"),
        ("application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),
        (None, ""),
    ],
)
def test_media_type(given: str | None, media: str) -> None:
    assert media_type(_request(given)) == media


def test_text_field_reads_a_form_field_as_fastapi_does() -> None:
    form = FormData([("a", "1"), ("a", "2"), ("empty", ""), ("long", "abcdef")])
    assert text_field(form, "a", 5) == (True, "2")  # the last of repeated values
    assert text_field(form, "empty", 5) == (True, None)  # empty is absent
    assert text_field(form, "missing", 5) == (True, None)
    assert text_field(form, "long", 5) == (False, None)  # too long: FastAPI's 422
    assert text_field(form, "long", 6) == (True, "abcdef")


def _form_request(body: bytes) -> Request:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    kind = b"application/x-www-form-urlencoded"
    scope = {"type": "http", "method": "POST", "path": "/", "headers": [(b"content-type", kind)]}
    return Request(scope, receive)


def _both_ways(body: bytes) -> tuple[FormData | None, FormData | str]:
    """The body as the binders read it, and as Starlette's ``request.form()`` reads it (or
    the name of what Starlette raised)."""
    ours = run(urlencoded_form(_form_request(body)))

    async def starlettes() -> FormData:
        return await _form_request(body).form()

    try:
        theirs: FormData | str = run(starlettes())
    except Exception as exc:
        theirs = type(exc).__name__
    return ours, theirs


# Bytes that mean something to a form's syntax, and some that do not, ASCII or not.
_FORM_BYTES = st.lists(
    st.sampled_from([b"&", b"=", b"+", b";", b"%", b"%2", b"%26", b"%3D", b"%C3%A9", b"%FF",
                     b"\xc3\xa9", b"\xff", b" ", b"a", b"move", b"version", b"0", b"t5-t9"]),
    max_size=30,
).map(b"".join)  # fmt: skip


@given(_FORM_BYTES)
@settings(max_examples=400, deadline=None)
def test_a_form_body_is_read_as_starlette_reads_it(body: bytes) -> None:
    ours, theirs = _both_ways(body)
    assert ours is not None and isinstance(theirs, FormData)
    assert list(ours.multi_items()) == list(theirs.multi_items())
    assert {k: ours.get(k) for k in ours} == {k: theirs.get(k) for k in theirs}


def test_a_form_of_more_fields_than_starlette_takes_is_declined() -> None:
    most = b"&".join([b"a=1"] * FORM_MAX_FIELDS)
    ours, theirs = _both_ways(most)
    assert ours is not None and isinstance(theirs, FormData) and len(ours) == 1
    ours, theirs = _both_ways(most + b"&b=2")
    assert ours is None and theirs == "MultiPartException"  # FastAPI answers it 400
