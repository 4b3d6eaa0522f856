"""Security headers on every response, and HEAD answered wherever GET is.

The content security policy allows scripts from this site only: no inline script, no inline
event handler, no ``eval`` (htmx runs with ``allowEval`` off). Styles may be inline (the board's
grid is a per-game ``<style>`` and a ``--cols`` attribute; Swagger UI and ReDoc inject theirs);
user text is always escaped, so that is not a way in. Pages cannot be framed by any site.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "worker-src 'self' blob:",  # ReDoc searches in a worker it builds from a blob
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HSTS = "max-age=63072000; includeSubDomains"


def security_headers(secure: bool) -> list[tuple[bytes, bytes]]:
    headers = [
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
        (b"x-frame-options", b"DENY"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
    ]
    if secure:
        headers.append((b"strict-transport-security", HSTS.encode()))
    return headers


def with_security_headers(
    headers: list[tuple[bytes, bytes]], security: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """``headers`` and each of ``security`` the app did not set itself."""
    present = {name.lower() for name, _ in headers}
    return [*headers, *((n, v) for n, v in security if n not in present)]


class SecurityHeaders:
    """Adds :func:`security_headers` to every HTTP response (a header the app set wins)."""

    def __init__(self, app: ASGIApp, secure: bool) -> None:
        self.app = app
        self.headers = security_headers(secure)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = with_security_headers(list(message.get("headers", ())), self.headers)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class HeadAsGet:
    """``HEAD`` runs the ``GET`` route and sends its status and headers without the body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def no_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, no_body)
