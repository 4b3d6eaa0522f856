"""HTMX helpers (app/web/pages/htmx.py): telling an HTMX request and saying Vary."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from app.web.pages.htmx import is_htmx, vary_on_htmx


def _request(*headers: tuple[bytes, bytes]) -> Request:
    return Request({"type": "http", "headers": list(headers)})


def test_only_hx_request_true_is_htmx() -> None:
    assert is_htmx(_request((b"hx-request", b"true")))
    assert not is_htmx(_request((b"hx-request", b"false")))
    assert not is_htmx(_request())


def test_vary_names_hx_request_beside_what_was_there() -> None:
    assert vary_on_htmx(Response()).headers["vary"] == "HX-Request"
    both = vary_on_htmx(Response(headers={"vary": "Cookie"}))
    assert both.headers["vary"] == "Cookie, HX-Request"
