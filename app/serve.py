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
