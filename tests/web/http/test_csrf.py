"""The CSRF middleware on its own (app/web/http/csrf.py): which requests count as cross-site,
the session's token, and the token read from the header or the form, body handed on intact."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.datastructures import Headers

from app.web.http.csrf import CSRF_KEY, FAILED_PAGE, CSRFMiddleware, cross_site, session_token
from tests.web.http.asgi import Answer, Echo, call, http_scope

FORM = ("content-type", "application/x-www-form-urlencoded")


def _cross(**headers: str) -> str | None:
    pairs = {"host": "hall.example", **{k.replace("_", "-"): v for k, v in headers.items()}}
    scope = http_scope("POST", headers=list(pairs.items()))
    return cross_site(scope, Headers(scope=scope))


def test_same_site_requests_are_not_cross_site() -> None:
    assert _cross() is None
    assert _cross(sec_fetch_site="same-origin", origin="https://hall.example") is None
    assert _cross(sec_fetch_site="none") is None
    # Compared by host and port, not scheme (a TLS proxy may not be trusted for the scheme).
    assert _cross(origin="http://HALL.example") is None
    assert _cross(referer="https://hall.example/games/3") is None


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"sec_fetch_site": "cross-site"}, "Sec-Fetch-Site: cross-site"),
        ({"sec_fetch_site": "same-site"}, "Sec-Fetch-Site: same-site"),
        ({"origin": "https://evil.example"}, "Origin: https://evil.example"),
        ({"origin": "null"}, "Origin: null"),
        ({"origin": "https://hall.example:8443"}, "Origin: https://hall.example:8443"),
        ({"referer": "https://evil.example/x"}, "Referer from another site"),
    ],
)
def test_another_site_is_named(headers: dict[str, str], reason: str) -> None:
    assert _cross(**headers) == reason


def test_an_origin_decides_before_the_referer() -> None:
    assert _cross(origin="https://hall.example", referer="https://evil.example/") is None


def test_the_session_token_is_made_once_and_kept() -> None:
    session: dict[str, Any] = {}
    token = session_token(session)
    assert len(token) >= 40 and session[CSRF_KEY] == token
    assert session_token(session) == token
    assert session_token({CSRF_KEY: ""}) != ""  # an empty one is replaced
    assert session_token({}) != token


def _post(
    inner: Echo,
    token: str | None,
    headers: list[tuple[str, str]],
    body: bytes | list[bytes] = b"",
) -> Answer:
    session = {} if token is None else {CSRF_KEY: token}
    scope = http_scope("POST", "/prefs", [("host", "testserver"), *headers], session=session)
    return call(CSRFMiddleware(inner), scope, body)


def test_the_header_token_lets_the_request_through() -> None:
    inner = Echo()
    answer = _post(inner, "t0k3n", [("x-csrftoken", "t0k3n")], b"a=1")
    assert answer.status == 200 and answer.body == b"POST a=1"


@pytest.mark.parametrize(
    ("session_token_", "sent"),
    [("t0k3n", "other"), ("t0k3n", ""), (None, "t0k3n"), ("", "")],
)
def test_a_wrong_or_missing_token_is_refused(session_token_: str | None, sent: str) -> None:
    inner = Echo()
    answer = _post(inner, session_token_, [("x-csrftoken", sent)])
    assert (answer.status, answer.body) == (403, FAILED_PAGE)
    assert inner.calls == []


def test_the_form_field_is_read_and_the_body_handed_on_whole() -> None:
    inner = Echo()
    body = [b"theme=dark&csrf", b"token=t0k3n&x=%C3%A9"]
    answer = _post(inner, "t0k3n", [FORM], body)
    assert answer.status == 200
    assert answer.body == b"POST theme=dark&csrftoken=t0k3n&x=%C3%A9"


def test_a_form_without_the_field_or_with_another_type_is_refused() -> None:
    assert _post(Echo(), "t0k3n", [FORM], b"theme=dark").status == 403
    json_body = b'{"csrftoken": "t0k3n"}'
    assert _post(Echo(), "t0k3n", [("content-type", "application/json")], json_body).status == 403


def test_unreadable_or_oversized_forms_are_4xx_not_errors() -> None:
    bad = _post(Echo(), "t0k3n", [FORM], b"csrftoken=t0k3n&x=\xff\xfe")
    assert (bad.status, bad.body) == (400, b"The form data could not be read.")
    big = _post(Echo(), "t0k3n", [FORM], [b"x" * 600_000, b"y" * 600_000])
    assert (big.status, big.body) == (413, b"The form is too large.")


def test_a_cross_site_post_is_refused_even_with_the_token() -> None:
    inner = Echo()
    answer = _post(inner, "t0k3n", [("x-csrftoken", "t0k3n"), ("origin", "https://evil.example")])
    assert answer.status == 403 and inner.calls == []


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_reading_methods_pass_unchecked(method: str) -> None:
    inner = Echo()
    scope = http_scope(method, "/", [("origin", "https://evil.example")])
    assert call(CSRFMiddleware(inner), scope).status == 200
    assert len(inner.calls) == 1
