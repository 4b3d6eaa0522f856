"""Cross-site request forgery: every cookie-authenticated mutation is checked, whatever it carries.

A browser request that can change something (POST, PUT, PATCH or DELETE) must

1. not come from another site: ``Sec-Fetch-Site`` (when the browser sends it) is
   ``same-origin`` or ``none``, and ``Origin`` (or, without it, ``Referer``) names this site;
2. carry the token of this browser's session, in the ``x-csrftoken`` header (HTMX) or the
   ``csrftoken`` form field: a random value kept in the signed session cookie, so a token read
   from another session, or a request with no session at all, is refused.

Nothing is skipped: not a request without cookies (a cross-site POST under ``SameSite=Lax``
carries none, and could otherwise sign a visitor in), not one with an ``Authorization`` header.
Only ``/api/`` is outside, because the API ignores cookies and authenticates with bearer tokens.
Signing in needs a token too, so a sign-in form posted from another site fails (login CSRF).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_KEY = "csrf"  # where the session keeps the token
FORM_FIELD = "csrftoken"
HEADER = "x-csrftoken"
# The methods a route of this app can change something with. Any other (TRACE, CONNECT, …)
# reaches no handler: the router answers it 405 with Allow, as the schema says.
CHECKED_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_FORM_BYTES = 1_000_000

FAILED_PAGE = (
    b"<!doctype html><title>Form expired</title><p>This form has expired or came from "
    b"another site. <a href='/'>Reload Patience Hall</a> and try again.</p>"
)


def session_token(session: MutableMapping[str, Any]) -> str:
    """This session's CSRF token, made on first use (it lives as long as the session)."""
    token = session.get(CSRF_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def _host_of(url: str) -> str:
    return urlsplit(url).netloc.lower()


def cross_site(scope: Scope, headers: Headers) -> str | None:
    """Why the request comes from another site, or None when nothing says it does.

    ``Origin`` and ``Referer`` are compared by host and port with the ``Host`` the request was
    sent to, not by scheme: behind a TLS proxy whose ``X-Forwarded-Proto`` is not trusted the
    app sees ``http`` while the browser says ``https``. (The session's token is required
    anyway; a page on another scheme of this host cannot read it.)
    """
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return f"Sec-Fetch-Site: {fetch_site}"
    here = headers.get("host", "").lower()
    origin = headers.get("origin")
    if origin is not None:
        return None if origin != "null" and _host_of(origin) == here else f"Origin: {origin}"
    referer = headers.get("referer")
    if referer is not None and _host_of(referer) != here:
        return "Referer from another site"
    return None


class CSRFMiddleware:
    """The check above, for every browser route; runs inside the session middleware."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in CHECKED_METHODS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if cross_site(scope, headers) is not None:
            await refuse(send)
            return
        expected = scope.get("session", {}).get(CSRF_KEY)
        sent = headers.get(HEADER)
        replay: Receive = receive
        if sent is None:
            try:
                sent, replay = await _form_token(scope, receive)
            except _Unreadable as exc:
                await _plain(send, exc.status, exc.message)
                return
        if not (
            isinstance(expected, str)
            and expected
            and isinstance(sent, str)
            and hmac.compare_digest(sent.encode(), expected.encode())
        ):
            await refuse(send)
            return
        await self.app(scope, replay, send)


class _Unreadable(Exception):
    def __init__(self, status: int, message: bytes) -> None:
        self.status, self.message = status, message


async def _form_token(scope: Scope, receive: Receive) -> tuple[str | None, Receive]:
    """The ``csrftoken`` form field, and a ``receive`` that hands the body to the app again."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            raise _Unreadable(413, b"The form is too large.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    token: str | None = None
    content_type = Headers(scope=scope).get("content-type", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        parse_sent = False

        async def once() -> Message:
            nonlocal parse_sent
            if not parse_sent:
                parse_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return {"type": "http.disconnect"}

        try:
            if content_type.startswith("application/x-www-form-urlencoded"):
                body.decode("utf-8")  # Starlette would read bad bytes as something else
            async with Request(scope, once).form() as form:
                value = form.get(FORM_FIELD)
                token = value if isinstance(value, str) else None
        except Exception:  # python-multipart's and Starlette's parse errors vary
            raise _Unreadable(400, b"The form data could not be read.") from None
    return token, again


async def refuse(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"text/html; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": FAILED_PAGE})


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})
