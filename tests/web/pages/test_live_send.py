"""Each send of an event stream (app/web/pages/live.py's ``EventStream``) keeps
sse-starlette's deadline with asyncio's timeout instead of an anyio cancel scope: a send that
finishes passes, one that takes longer than ``send_timeout`` ends the stream with the library's
``SendTimeoutError``, a stream without a timeout waits, and a ``TimeoutError`` of the send's own
is not mistaken for the deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sse_starlette.sse import SendTimeoutError

from app.web.pages.live import EventStream
from tests.aio import run


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # an async generator that ends at once


def _stream(send_timeout: float | None) -> EventStream:
    return EventStream(_nothing(), send_timeout=send_timeout)


def _message() -> dict[str, Any]:
    return {"type": "http.response.body", "body": b"data: x\n\n", "more_body": True}


def test_a_send_within_the_deadline_goes_through() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        await asyncio.sleep(0)
        sent.append(message)

    run(_stream(5)._send_with_timeout(send, _message()))
    assert sent == [_message()]


def test_a_send_past_the_deadline_ends_the_stream_as_the_library_does() -> None:
    async def stuck(message: Any) -> None:
        await asyncio.sleep(30)  # a client that reads nothing

    began = time.monotonic()
    with pytest.raises(SendTimeoutError):
        run(_stream(0.05)._send_with_timeout(stuck, _message()))
    assert time.monotonic() - began < 10  # the deadline, not the stuck send, ended it


def test_without_a_send_timeout_a_slow_send_is_waited_for() -> None:
    sent: list[dict[str, Any]] = []

    async def slow(message: Any) -> None:
        await asyncio.sleep(0.05)
        sent.append(message)

    run(_stream(None)._send_with_timeout(slow, _message()))
    assert sent == [_message()]


def test_a_timeout_of_the_send_itself_is_not_taken_for_the_deadline() -> None:
    async def failing(message: Any) -> None:
        raise TimeoutError("the socket's own")

    with pytest.raises(TimeoutError) as raised:
        run(_stream(5)._send_with_timeout(failing, _message()))
    assert not isinstance(raised.value, SendTimeoutError)
    assert str(raised.value) == "the socket's own"
