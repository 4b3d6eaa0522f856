"""HTMX request helpers."""

from __future__ import annotations

from fastapi import Request
from starlette.responses import Response


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def vary_on_htmx(response: Response) -> Response:
    """Answers that differ by HX-Request must say so, or a cache may serve the wrong one."""
    existing = response.headers.get("vary")
    response.headers["vary"] = f"{existing}, HX-Request" if existing else "HX-Request"
    return response
