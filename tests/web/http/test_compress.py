"""gzip (app/web/http/compress.py), held to Starlette's GZipMiddleware on the same answers."""

from __future__ import annotations

import gzip
from collections.abc import Sequence

import pytest
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.http.compress import LEVEL, Gzip, accepts_gzip
from tests.aio import run
from tests.web.http.asgi import Answer, call, http_scope

BROWSER = [("accept-encoding", "gzip, deflate, br, zstd")]
JSON = (
    b'{"id":"g","piles":['
    + b",".join(b'{"cards":["QS","JH"],"hidden":2}' for _ in range(40))
    + b"]}"
)


class Sends:
    """An inner app that sends ``messages`` after a start with ``headers`` and ``status``."""

    def __init__(
        self,
        messages: Sequence[Message],
        headers: Sequence[tuple[bytes, bytes]] = ((b"content-type", b"application/json"),),
        status: int = 200,
        trailers: bool = False,
    ) -> None:
        self.messages = messages
        self.headers = list(headers)
        self.status = status
        self.trailers = trailers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message = {"type": "http.response.start", "status": self.status}
        start["headers"] = list(self.headers)
        if self.trailers:
            start["trailers"] = True
        await send(start)
        for message in self.messages:
            await send(dict(message))


def body(data: bytes, more: bool = False) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


def both(inner: ASGIApp, headers: Sequence[tuple[str, str]] = BROWSER) -> tuple[Answer, Answer]:
    """The answer through :class:`Gzip` and through Starlette's middleware at the same level."""
    ours = call(Gzip(inner, minimum_size=512), http_scope("GET", "/", headers))
    theirs = call(
        GZipMiddleware(inner, minimum_size=512, compresslevel=LEVEL),
        http_scope("GET", "/", headers),
    )
    return ours, theirs


def plain(answer: Answer) -> bytes:
    return (
        gzip.decompress(answer.body) if answer.header("content-encoding") == "gzip" else answer.body
    )


def same(ours: Answer, theirs: Answer) -> None:
    assert ours.status == theirs.status
    assert sorted(ours.headers) == sorted(theirs.headers)
    assert plain(ours) == plain(theirs)


def test_a_whole_answer_is_compressed_as_starlette_does() -> None:
    inner = Sends(
        [body(JSON)],
        [(b"content-type", b"application/json"), (b"content-length", str(len(JSON)).encode())],
    )
    ours, theirs = both(inner)
    same(ours, theirs)
    assert ours.header("content-encoding") == "gzip" and ours.header("vary") == "Accept-Encoding"
    assert int(ours.header("content-length") or 0) == len(ours.body) < len(JSON)
    assert gzip.decompress(ours.body) == JSON
    assert ours.body == gzip.compress(JSON, LEVEL, mtime=0)  # the same bytes, one call


@pytest.mark.parametrize(
    ("headers", "status", "data"),
    [
        ([(b"content-type", b"application/json")], 200, b"{}"),  # under minimum_size
        ([(b"content-type", b"text/event-stream")], 200, JSON),
        ([(b"content-type", b"image/png")], 200, JSON),
        ([(b"content-type", b"application/grpc+proto")], 200, JSON),
        ([(b"content-type", b"application/json"), (b"content-encoding", b"br")], 200, JSON),
        ([(b"content-type", b"application/json")], 206, JSON),
    ],
)
def test_what_starlette_sends_as_it_is_goes_as_it_is(
    headers: list[tuple[bytes, bytes]], status: int, data: bytes
) -> None:
    ours, theirs = both(Sends([body(data)], headers, status))
    same(ours, theirs)
    assert ours.body == data and ours.header("content-encoding") != "gzip"


def test_a_vary_the_app_set_keeps_its_value_and_gains_accept_encoding() -> None:
    inner = Sends([body(JSON)], [(b"content-type", b"text/html"), (b"vary", b"HX-Request")])
    ours, theirs = both(inner)
    same(ours, theirs)
    assert ours.header("vary") == "HX-Request, Accept-Encoding"


def test_without_gzip_in_accept_encoding_the_body_goes_as_it_is_and_says_it_varies() -> None:
    for headers in ([], [("accept-encoding", "br")]):
        for chunks in ([body(JSON)], [body(JSON[:600], more=True), body(JSON[600:])]):
            ours, theirs = both(Sends(chunks), headers)
            same(ours, theirs)
            assert ours.body == JSON and ours.header("vary") == "Accept-Encoding"


def test_a_streamed_answer_goes_to_starlettes_responder() -> None:
    chunks = [body(JSON[:600], more=True), body(JSON[600:], more=True), body(b"", more=False)]
    ours, theirs = both(Sends(chunks))
    assert ours.status == theirs.status and sorted(ours.headers) == sorted(theirs.headers)
    assert ours.header("content-encoding") == "gzip" and plain(ours) == JSON
    assert ours.body == theirs.body  # the library's own compressor, chunk for chunk


def test_an_answer_with_trailers_goes_to_starlettes_responder() -> None:
    ours, theirs = both(Sends([body(JSON)], trailers=True))
    same(ours, theirs)
    assert ours.header("content-length") is None and plain(ours) == JSON


def test_accept_encoding_is_read_from_the_raw_headers() -> None:
    assert accepts_gzip(http_scope("GET", "/", BROWSER))
    assert not accepts_gzip(http_scope("GET", "/", [("accept-encoding", "identity")]))
    assert not accepts_gzip(http_scope("GET", "/"))


def test_an_event_streams_headers_go_out_before_its_first_event() -> None:
    seen: list[str] = []

    async def stream(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        seen.append("start sent")  # an event stream waits here for its first event
        await send(body(b"data: 1\n\n", more=True))
        await send(body(b"", more=False))

    sent: list[str] = []

    async def client(message: Message) -> None:
        sent.append(message["type"])
        if message["type"] == "http.response.start":
            assert seen == [], "the headers waited for a body"

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    run(Gzip(stream)(http_scope("GET", "/", BROWSER), receive, client))
    assert sent == ["http.response.start", "http.response.body", "http.response.body"]
