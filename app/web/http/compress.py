"""gzip for clients that accept it: an answer sent in one piece is compressed in one call.

Starlette's ``GZipMiddleware`` makes a responder object for every request, parses the answer's
headers into ``Headers`` and ``MutableHeaders`` objects and compresses through a ``compressobj``
at level 9. For an answer that arrives as one body message (every JSON answer, page and HTMX
fragment here) that came to a few percent of a move's CPU under load (bench/RESULTS.md, issue
26). :class:`Gzip` does the same for those answers with one ``zlib.compress`` call and a pass over
the raw headers; any other answer (streamed, a file sent by path, trailers, early hints) goes
to Starlette's responder, message for message, so its behaviour is the library's.

What it decides as Starlette does: compression only for ``gzip`` in ``Accept-Encoding``; not
for a body under ``minimum_size``, a 206, an answer that already has a ``Content-Encoding`` or
one whose type Starlette excludes (event streams, images, archives); ``Vary: Accept-Encoding``
on every other answer, compressed or not (a cache must not hand one client's encoding to
another), added to a ``Vary`` the app set.
"""

from __future__ import annotations

import zlib

from starlette.middleware.gzip import (
    DEFAULT_EXCLUDED_CONTENT_TYPES,
    GZipResponder,
    IdentityResponder,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# zlib's default level: within a few bytes of level 9 on the answers here, for a fifth less CPU
# (bench/RESULTS.md, issue 26).
LEVEL = 6
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip member, as Starlette and browsers expect
_EXCLUDED = frozenset(DEFAULT_EXCLUDED_CONTENT_TYPES)


def accepts_gzip(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"accept-encoding":
            return b"gzip" in value
    return False


def _excluded(content_type: bytes) -> bool:
    media = content_type.decode("latin-1").partition(";")[0].strip().lower()
    if media.startswith("application/grpc+"):
        return True
    return media in _EXCLUDED or f"{media.partition('/')[0]}/*" in _EXCLUDED


def _as_is(start: Message) -> bool:
    """Whether an answer is sent without compression whatever its body (as Starlette decides)."""
    if start["status"] == 206:
        return True
    for name, value in start.get("headers") or ():
        lower = name.lower()
        if lower == b"content-encoding" or (lower == b"content-type" and _excluded(value)):
            return True
    return False


def _with_vary(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    for i, (name, value) in enumerate(headers):
        if name.lower() == b"vary":
            if b"accept-encoding" not in value.lower():
                headers[i] = (name, value + b", Accept-Encoding")
            return headers
    headers.append((b"vary", b"Accept-Encoding"))
    return headers


def _one_piece(
    start: Message, message: Message, accepted: bool, minimum_size: int, level: int
) -> tuple[Message, Message]:
    body = message.get("body", b"")
    if len(body) < minimum_size:
        return start, message
    headers = _with_vary(list(start.get("headers") or ()))
    if accepted:
        body = zlib.compress(body, level, _GZIP_WBITS)
        headers = [(n, v) for n, v in headers if n.lower() != b"content-length"]
        headers += [(b"content-encoding", b"gzip"), (b"content-length", b"%d" % len(body))]
        message = {**message, "body": body}
    return {**start, "headers": headers}, message


def whole_answer(
    start: Message, message: Message, accepted: bool, minimum_size: int = 512, level: int = LEVEL
) -> tuple[Message, Message]:
    """The start and body :class:`Gzip` sends for an answer whose body is the one message
    ``message`` (the move lane's, app/web/http/lane.py)."""
    if _as_is(start):
        return start, message
    return _one_piece(start, message, accepted, minimum_size, level)


class Gzip:
    def __init__(self, app: ASGIApp, minimum_size: int = 512, level: int = LEVEL) -> None:
        self.app = app
        self.minimum_size = minimum_size
        self.level = level

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        accepted = accepts_gzip(scope)
        start: Message | None = None
        streamed: IdentityResponder | None = None
        as_is = False

        async def sending(message: Message) -> None:
            nonlocal start, streamed, as_is
            if as_is:
                await send(message)
                return
            if streamed is not None:
                await streamed.send_with_compression(message)
                return
            kind = message["type"]
            if kind == "http.response.start":
                if _as_is(message):  # at once: an event stream's headers go before any event
                    as_is = True
                    await send(message)
                else:
                    start = message
                return
            if (
                start is None
                or kind != "http.response.body"
                or message.get("more_body", False)
                or start.get("trailers", False)
            ):
                # Not one whole body: Starlette's responder from here on, the start included.
                streamed = (
                    GZipResponder(self.app, self.minimum_size, compresslevel=self.level)
                    if accepted
                    else IdentityResponder(self.app, self.minimum_size)
                )
                streamed.send = send
                if start is not None:
                    await streamed.send_with_compression(start)
                await streamed.send_with_compression(message)
                return
            start, message = _one_piece(start, message, accepted, self.minimum_size, self.level)
            await send(start)
            await send(message)

        await self.app(scope, receive, sending)
