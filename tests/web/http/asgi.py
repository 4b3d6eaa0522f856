"""Driving one pure-ASGI middleware directly: a scope in, the messages it sends out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.aio import run


@dataclass
class Answer:
    """What an ASGI app sent: its status, headers (lower-case names) and body."""

    status: int = 0
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.decode("latin-1").lower() == name.lower():
                return value.decode("latin-1")
        return None


def http_scope(
    method: str = "GET",
    path: str = "/",
    headers: Sequence[tuple[str, str]] = (),
    scheme: str = "http",
    **extra: Any,
) -> Scope:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "scheme": scheme,
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "server": ("testserver", 80),
        "client": ("203.0.113.9", 5000),
        **extra,
    }


def call(app: ASGIApp, scope: Scope, body: bytes | Sequence[bytes] = b"") -> Answer:
    """Runs ``app`` on ``scope`` with ``body`` (one chunk, or several as ``more_body``)."""
    chunks = [body] if isinstance(body, bytes) else list(body)
    answer = Answer()

    async def receive() -> Message:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", ())]
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")

    async def main() -> None:
        await app(scope, receive, send)

    run(main())
    return answer


class Echo:
    """An inner app that answers 200 with the method and body it was given, and counts calls."""

    def __init__(self, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
        self.calls: list[Scope] = []
        self.headers = list(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls.append(scope)
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = [(b"content-type", b"text/plain"), *self.headers]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": scope["method"].encode() + b" " + body})
