"""A styled, explicit page in place of "This form has expired" for ever: with Secure cookies
(production) a browser on plain HTTP at any name but localhost drops the session cookie, so no
form can ever work. Browser pages answer this page instead (400); the API (bearer tokens, no
cookies), ``/healthz``, ``/metrics`` and ``/static`` are unaffected."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from app.web.i18n import lang_of_scope, speaking
from app.web.pages.templating import templates

_EXEMPT = ("/api/", "/static/", "/healthz", "/metrics")
# Browsers keep Secure cookies on http://localhost (a "potentially trustworthy" origin).
_LOCAL = ("localhost", "127.0.0.1", "[::1]", "::1")


def _host(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"host":
            return bytes(value).decode("latin-1")
    server = scope.get("server")
    return str(server[0]) if server else ""


def is_local(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    name = name.lower()
    return name in _LOCAL or name.endswith(".localhost")


def needs_https(scope: Scope, secure: bool) -> bool:
    """Whether this request must be answered the page that asks for HTTPS."""
    if (
        not secure
        or scope["type"] != "http"
        or scope.get("scheme") != "http"
        or scope["path"].startswith(_EXEMPT)
    ):
        return False
    return not is_local(_host(scope))


class NeedsHttps:
    def __init__(self, app: ASGIApp, secure: bool) -> None:
        self.app = app
        self.secure = secure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not needs_https(scope, self.secure):
            await self.app(scope, receive, send)
            return
        host = _host(scope)
        # No session yet, so no account: the address's ?lang=, the cookie or Accept-Language.
        lang = lang_of_scope(scope)
        with speaking(lang):
            body = templates.env.get_template("pages/needs_https.html").render(host=host).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-store"),
                    (b"content-language", lang.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
