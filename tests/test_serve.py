"""``python -m app.serve`` (app/serve.py): the read deadline of every request, on a protocol
driven by hand with a clock of the test's own; each answer's head and body in one write; and
the JSON logging it configures. The deadline
against a real server: tests/web/test_limits.py."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from uvicorn import config as uvicorn_config
from uvicorn.config import Config
from uvicorn.server import ServerState

from app.serve import OneWrite, TimedHttpProtocol, json_log_config, json_logs_wanted
from tests.aio import run


class _Timer:
    def __init__(self, delay: float, callback: Callable[[], None]) -> None:
        self.delay, self.callback, self.cancelled = delay, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False
        self.written = b""
        self.writes: list[bytes] = []  # each write, as the socket would be asked for it

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5555)}.get(name)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)
        self.writes.append(bytes(data))

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


class _Clocked(TimedHttpProtocol):
    timers: list[_Timer]

    def start_timer(self, delay: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(delay, callback)
        self.timers.append(timer)
        return timer


async def _hello(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


def _protocol(read_timeout: float | None = 3.0, app: Any = _hello) -> tuple[_Clocked, _Transport]:
    config = Config(app, lifespan="off", log_level="warning")
    config.load()
    protocol = _Clocked(config, ServerState(), {}, asyncio.get_running_loop())
    protocol.timers = []
    protocol.read_timeout = read_timeout
    transport = _Transport()
    protocol.connection_made(transport)
    return protocol, transport


def test_a_connection_that_says_nothing_is_closed_at_the_deadline() -> None:
    async def scenario() -> None:
        protocol, transport = _protocol()
        (timer,) = protocol.timers  # from the connection's opening
        assert timer.delay == 3.0 and not transport.closed
        protocol.data_received(b"GET / HTTP/1.1\r\nHo")  # a byte at a time: the same deadline
        protocol.data_received(b"st: x\r\n")
        assert protocol.timers == [timer]
        timer.callback()
        assert transport.closed
        protocol.connection_lost(None)

    run(scenario())


def test_a_request_read_in_full_stops_the_clock_and_the_next_one_starts_it() -> None:
    async def scenario() -> None:
        protocol, transport = _protocol()
        protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        first = protocol.timers[0]
        assert first.cancelled  # read in full: the app may take its time to answer
        while protocol.cycle is not None and not protocol.cycle.response_complete:
            await asyncio.sleep(0)
        assert transport.written.startswith(b"HTTP/1.1 200 OK") and not transport.closed
        protocol.data_received(b"GET /again HTTP/1.1\r\n")  # keep-alive: a new request
        assert len(protocol.timers) == 2 and not protocol.timers[1].cancelled
        protocol.connection_lost(None)
        assert protocol.timers[1].cancelled  # nothing left to fire on a closed connection

    run(scenario())


def test_the_deadline_comes_from_the_environment_unless_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REQUEST_READ_TIMEOUT", "2.5")

    async def scenario() -> None:
        protocol, _ = _protocol(read_timeout=None)
        assert [t.delay for t in protocol.timers] == [2.5]
        protocol.connection_lost(None)

    run(scenario())


async def _answered(protocol: TimedHttpProtocol) -> None:
    while protocol.cycle is not None and not protocol.cycle.response_complete:
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # the turn after: a head still held would be written now


def test_an_answer_goes_out_in_one_write() -> None:
    async def scenario() -> None:
        protocol, transport = _protocol()
        protocol.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await _answered(protocol)
        (whole,) = transport.writes
        assert whole.startswith(b"HTTP/1.1 200 OK\r\n") and whole.endswith(
            b"\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        )
        # Keep-alive: the next request's answer, in one write of its own, after the first.
        protocol.data_received(b"GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
        await _answered(protocol)
        assert len(transport.writes) == 2 and transport.writes[1] == whole
        protocol.connection_lost(None)

    run(scenario())


def test_pipelined_requests_are_answered_in_order_one_write_each() -> None:
    async def scenario() -> None:
        protocol, transport = _protocol()
        protocol.data_received(
            b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        for _ in range(100):
            await asyncio.sleep(0)
        assert len(transport.writes) == 2
        assert all(
            w.endswith(b"hello\r\n0\r\n\r\n") and w.count(b"HTTP/1.1 200") == 1
            for w in transport.writes
        )
        protocol.connection_lost(None)

    run(scenario())


def test_a_streamed_answers_head_is_not_held_until_its_first_chunk() -> None:
    go_on = asyncio.Event()

    async def streaming(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await go_on.wait()  # an event stream waiting for its first event
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def scenario() -> None:
        protocol, transport = _protocol(app=streaming)
        protocol.data_received(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        for _ in range(5):
            await asyncio.sleep(0)
        (head,) = transport.writes  # written at the end of the turn it was sent in
        assert head.startswith(b"HTTP/1.1 200 OK") and head.endswith(b"\r\n\r\n")
        go_on.set()
        await _answered(protocol)
        assert transport.writes[1:] == [b"9\r\ndata: 1\n\n\r\n", b"0\r\n\r\n"]
        protocol.connection_lost(None)

    run(scenario())


def test_a_held_head_goes_out_before_anything_else_is_asked_of_the_transport() -> None:
    async def scenario() -> None:
        transport = _Transport()
        once = OneWrite(transport, asyncio.get_running_loop())
        once.write(b"HEAD")
        assert transport.writes == [] and not once.is_closing()  # asked: written first
        assert transport.writes == [b"HEAD"]
        once.write(b"body")
        once.close()
        assert transport.writes == [b"HEAD", b"body"] and transport.closed

        closed = _Transport()
        late = OneWrite(closed, asyncio.get_running_loop())
        late.write(b"HEAD")
        closed.closed = True  # the client went away before the end of the turn
        await asyncio.sleep(0)
        assert closed.writes == []  # nothing written to a closing transport

    run(scenario())


def test_uvicorn_uses_the_timed_protocol_for_httptools() -> None:
    assert uvicorn_config.HTTP_PROTOCOLS["httptools"] == "app.serve:TimedHttpProtocol"


@pytest.mark.parametrize(
    ("value", "wanted"),
    [
        (None, True),
        ("true", True),
        ("1", True),
        (" Off ", False),
        ("no", False),
        ("0", False),
        ("FALSE", False),
    ],
)
def test_json_logs_are_on_unless_turned_off(
    monkeypatch: pytest.MonkeyPatch, value: str | None, wanted: bool
) -> None:
    if value is None:
        monkeypatch.delenv("JSON_LOGS", raising=False)
    else:
        monkeypatch.setenv("JSON_LOGS", value)
    assert json_logs_wanted() is wanted


def test_the_json_log_configuration_writes_one_object_a_line() -> None:
    config = json_log_config()
    for name in ("uvicorn", "uvicorn.access", "patience_hall", "app", "alembic"):
        assert config["loggers"][name]["handlers"] == ["json"], name
        assert config["loggers"][name]["propagate"] is False  # not a second time by the root
    assert config["root"] == {"handlers": ["json"], "level": "WARNING"}
    assert config["handlers"]["json"]["stream"] == "ext://sys.stderr"
    module, _, name = config["formatters"]["json"]["()"].rpartition(".")
    formatter = getattr(importlib.import_module(module), name)()
    record = logging.LogRecord("app.test", logging.INFO, __file__, 1, "hello %s", ("there",), None)
    line = json.loads(formatter.format(record))
    assert line["msg"] == "hello there" and line["level"] == "info"
