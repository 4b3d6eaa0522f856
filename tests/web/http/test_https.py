"""The page for production cookies over plain HTTP (app/web/http/https.py): which requests get
it, which pass, and in which language."""

from __future__ import annotations

import pytest

from app.web.http.https import NeedsHttps, is_local
from tests.web.http.asgi import Echo, call, http_scope


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "127.0.0.1:80", "[::1]", "[::1]:8000", "app.localhost"]
)
def test_local_names_keep_secure_cookies(host: str) -> None:
    assert is_local(host)


@pytest.mark.parametrize(
    "host", ["hall.example", "hall.example:8000", "10.0.0.5", "localhost.evil"]
)
def test_other_names_are_not_local(host: str) -> None:
    assert not is_local(host)


def test_a_page_over_http_at_a_public_name_explains_instead_of_failing() -> None:
    inner = Echo()
    scope = http_scope("GET", "/", [("host", "hall.example"), ("accept-language", "de")])
    answer = call(NeedsHttps(inner, secure=True), scope)
    assert answer.status == 400 and inner.calls == []
    assert answer.header("content-language") == "de"
    assert answer.header("cache-control") == "no-store"
    assert b"hall.example" in answer.body
    assert answer.header("content-length") == str(len(answer.body))


@pytest.mark.parametrize("path", ["/api/games", "/static/x.css", "/healthz", "/metrics"])
def test_the_api_and_machine_paths_pass(path: str) -> None:
    inner = Echo()
    scope = http_scope("GET", path, [("host", "hall.example")])
    assert call(NeedsHttps(inner, secure=True), scope).status == 200


def test_https_local_or_not_secure_pass() -> None:
    public = [("host", "hall.example")]
    for app, scope in [
        (NeedsHttps(Echo(), secure=True), http_scope("GET", "/", public, scheme="https")),
        (NeedsHttps(Echo(), secure=True), http_scope("GET", "/", [("host", "localhost:8000")])),
        (NeedsHttps(Echo(), secure=False), http_scope("GET", "/", public)),
    ]:
        assert call(app, scope).status == 200
