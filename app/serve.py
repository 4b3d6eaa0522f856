"""``python -m app.serve [uvicorn options]``: uvicorn, with a deadline for reading a request.

uvicorn closes a keep-alive connection that stays idle after an answer
(``--timeout-keep-alive``), but not one that opens and says nothing, or sends its headers or
body a byte at a time: such connections would be kept for ever. :class:`TimedHttpProtocol`
(uvicorn's httptools protocol) gives every request ``REQUEST_READ_TIMEOUT`` seconds (default
10), from its first byte (or from the connection's opening) until it has been read in full,
then closes the connection. Every other option is uvicorn's own; the start scripts use this
module in place of ``python -m uvicorn``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

from uvicorn import config as uvicorn_config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def _read_timeout() -> float:
    return float(os.environ.get("REQUEST_READ_TIMEOUT", "10"))


class Timer(Protocol):
    def cancel(self) -> None: ...


class OneWrite:
    """A request's transport, as its answer is written (issue 26): the head of the answer is
    held until its body comes, and the two go out in one write.

    uvicorn writes an answer's status line and headers, then its body, as two writes: two
    system calls and, over TCP, two segments to receive. For a move (one whole answer, head
    and body sent in the same turn of the event loop) one write does. The head is held at most
    until the end of the turn (``call_soon``), so a streamed answer's head is not delayed
    until its first event; it also goes out before anything else is asked of the transport."""

    __slots__ = ("_head", "_loop", "_transport", "_wrote")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._head: bytes | None = None
        self._wrote = False

    def write(self, data: bytes) -> None:
        if not self._wrote:  # the answer's head: uvicorn's first write of a request
            self._wrote = True
            self._head = data
            self._loop.call_soon(self.flush)
            return
        head = self._head
        if head is not None:
            self._head = None
            data = head + data
        self._transport.write(data)

    def flush(self) -> None:
        head = self._head
        if head is not None:
            self._head = None
            if not self._transport.is_closing():
                self._transport.write(head)

    def __getattr__(self, name: str) -> Any:
        self.flush()  # whatever else is asked (close, is_closing, …) comes after the head
        return getattr(self._transport, name)


class TimedHttpProtocol(HttpToolsProtocol):
    read_timeout: float | None = None  # seconds; None: REQUEST_READ_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: Timer | None = None

    def start_timer(self, delay: float, callback: Callable[[], None]) -> Timer:
        """The read deadline's timer: on the event loop's clock (a test sets a clock of its
        own, which it moves, in a subclass)."""
        return self.loop.call_later(delay, callback)

    def _arm(self) -> None:
        if self._read_timer is None:
            timeout = self.read_timeout if self.read_timeout is not None else _read_timeout()
            self._read_timer = self.start_timer(timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _too_slow(self) -> None:
        self._read_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._arm()  # the first bytes of a new request
        super().data_received(data)

    def on_headers_complete(self) -> None:
        before = self.cycle
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and cycle is not before:  # a new request (not an upgrade)
            cycle.transport = OneWrite(self.transport, self.loop)  # type: ignore[assignment]

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def json_logs_wanted() -> bool:
    """``JSON_LOGS`` (on unless 0, false, no or off), read before the settings can be."""
    return os.environ.get("JSON_LOGS", "true").strip().lower() not in ("0", "false", "no", "off")


def json_log_config() -> dict[str, Any]:
    """uvicorn's logging, every line one JSON object (``JSON_LOGS``, on by default): uvicorn's
    own lines, the app's (``patience_hall.*`` and ``app.*``) and any warning or third-party line
    that reaches the root logger. The app adds no second handler of its own then
    (``app.web.http.observe.configure_logging``)."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    own = {"handlers": ["json"], "level": "INFO", "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "app.web.http.observe.JsonFormatter"}},
        "handlers": {"json": handler},
        "loggers": {
            "uvicorn": own,
            "uvicorn.error": {"level": "INFO"},
            "uvicorn.access": own,
            "patience_hall": own,
            "app": own,
            # The migration's steps (python -m app.cli migrate), as JSON too.
            "alembic": own,
        },
        "root": {"handlers": ["json"], "level": "WARNING"},
    }


if json_logs_wanted():
    logging.captureWarnings(True)
    # uvicorn's default (its Config's ``log_config``): replaced in place, so the worker
    # processes, which receive the Config, log the same way.
    uvicorn_config.LOGGING_CONFIG.clear()
    uvicorn_config.LOGGING_CONFIG.update(json_log_config())

# ``--http httptools`` names this protocol, in this process and in the worker processes
# (uvicorn starts them with multiprocessing's "spawn", which imports this module again).
uvicorn_config.HTTP_PROTOCOLS["httptools"] = "app.serve:TimedHttpProtocol"


def main() -> None:
    from uvicorn.main import main as uvicorn_main

    uvicorn_main(prog_name="python -m app.serve")


if __name__ == "__main__":
    main()
