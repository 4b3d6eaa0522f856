"""Security headers and HEAD (app/web/http/headers.py), each middleware driven on its own."""

from __future__ import annotations

from app.web.http.headers import CSP, HSTS, HeadAsGet, SecurityHeaders, security_headers
from tests.web.http.asgi import Echo, call, http_scope


def test_the_policy_allows_scripts_from_this_site_only_and_no_framing() -> None:
    parts = dict(part.split(" ", 1) for part in CSP.split("; "))
    assert parts["script-src"] == "'self'"
    assert parts["frame-ancestors"] == "'none'"
    assert parts["object-src"] == "'none'"
    assert "unsafe-eval" not in CSP and "unsafe-inline" not in parts["script-src"]


def test_hsts_only_when_secure() -> None:
    assert b"strict-transport-security" not in dict(security_headers(False))
    assert dict(security_headers(True))[b"strict-transport-security"] == HSTS.encode()


def test_every_answer_gets_the_headers_and_the_apps_own_win() -> None:
    inner = Echo(headers=[(b"X-Frame-Options", b"SAMEORIGIN")])
    answer = call(SecurityHeaders(inner, secure=True), http_scope())
    assert answer.header("content-security-policy") == CSP
    assert answer.header("x-content-type-options") == "nosniff"
    assert answer.header("strict-transport-security") == HSTS
    assert [v for k, v in answer.headers if k.lower() == b"x-frame-options"] == [b"SAMEORIGIN"]
    assert answer.body == b"GET "


def test_head_runs_get_and_sends_no_body() -> None:
    inner = Echo()
    answer = call(HeadAsGet(inner), http_scope("HEAD"))
    assert inner.calls[0]["method"] == "GET"
    assert answer.status == 200 and answer.body == b""
    assert answer.header("content-type") == "text/plain"


def test_other_methods_pass_through_head_unchanged() -> None:
    inner = Echo()
    answer = call(HeadAsGet(inner), http_scope("POST"), b"x")
    assert inner.calls[0]["method"] == "POST" and answer.body == b"POST x"
