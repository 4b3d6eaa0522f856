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


def test_a_send_that_does_not_wait_needs_no_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that keeps up takes the event at once: no timer is made for that send (each
    is ~9 µs, a thousand streams an event); a send that waits is timed as before."""
    deadlines: list[float | None] = []
    real_timeout = asyncio.timeout

    def counted(delay: float | None) -> asyncio.Timeout:
        deadlines.append(delay)
        return real_timeout(delay)

    monkeypatch.setattr(asyncio, "timeout", counted)
    sent: list[dict[str, Any]] = []

    async def at_once(message: Any) -> None:
        sent.append(message)

    async def waits(message: Any) -> None:
        await asyncio.sleep(0)
        sent.append(message)

    run(_stream(5)._send_with_timeout(at_once, _message()))
    assert (sent, deadlines) == ([_message()], [])
    run(_stream(5)._send_with_timeout(waits, _message()))
    assert (sent, deadlines) == ([_message(), _message()], [5])


def test_a_send_that_waits_again_and_again_gets_each_answer() -> None:
    got: list[int] = []

    async def send(message: Any) -> None:
        loop = asyncio.get_running_loop()
        for n in range(3):
            answer: asyncio.Future[int] = loop.create_future()
            loop.call_soon(answer.set_result, n)
            got.append(await answer)

    run(_stream(5)._send_with_timeout(send, _message()))
    assert got == [0, 1, 2]


def test_an_error_after_a_wait_is_the_sends_own() -> None:
    async def breaks(message: Any) -> None:
        await asyncio.sleep(0)
        raise ConnectionResetError("the client went away")

    with pytest.raises(ConnectionResetError, match="the client went away"):
        run(_stream(5)._send_with_timeout(breaks, _message()))


@pytest.mark.parametrize("waiting", ["on a future", "turn by turn"])
def test_a_stream_cancelled_while_its_send_waits_cancels_the_send(waiting: str) -> None:
    """Whether the send waits on a future (cancelled with the task) or only lets other tasks
    run (``sleep(0)``: the cancellation is thrown into it), it is cancelled with its stream."""
    seen: list[str] = []

    async def stuck(message: Any) -> None:
        try:
            if waiting == "on a future":
                await asyncio.sleep(30)
            else:
                for _ in range(100_000):
                    await asyncio.sleep(0)
        except asyncio.CancelledError:
            seen.append("send cancelled")
            raise

    async def scenario() -> None:
        task = asyncio.create_task(_stream(5)._send_with_timeout(stuck, _message()))
        for _ in range(5):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    assert seen == ["send cancelled"]


def test_a_send_past_the_deadline_is_itself_cancelled() -> None:
    seen: list[str] = []

    async def stuck(message: Any) -> None:
        try:
            await asyncio.sleep(30)
        finally:
            seen.append("send ended")

    with pytest.raises(SendTimeoutError):
        run(_stream(0.05)._send_with_timeout(stuck, _message()))
    assert seen == ["send ended"]
