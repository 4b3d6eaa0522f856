"""Real servers and a Server-Sent Events reader, for the tests of live rooms.

The ASGI test client waits for a whole response, so event streams are tested against uvicorn
itself: a subprocess on a free local port against the test database.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

from app.config import PROJECT_DIR
from app.engine import DEVELOPMENT_KEY
from tests.web.hidden import check_event


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def uvicorn_server(database_url: str, log: Path, **env: str) -> Iterator[str]:
    """``uvicorn --factory app.main:create_app`` on a free port; yields its base URL."""
    with uvicorn_server_on(free_port(), database_url, log, **env) as base:
        yield base


@contextmanager
def uvicorn_server_on(port: int, database_url: str, log: Path, **env: str) -> Iterator[str]:
    """As :func:`uvicorn_server`, on a chosen port (a range of one's own on a shared box)."""
    environment = {
        **os.environ,
        "APP_ENV": "test",
        "DATABASE_URL": database_url,
        "DEAL_KEY": DEVELOPMENT_KEY.decode(),
        "RACE_COUNTDOWN_S": "0",
        **env,
    }
    command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    command += ["--timeout-graceful-shutdown", "2"]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, cwd=PROJECT_DIR, env=environment, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server stopped: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    message = f"the server did not start: {log.read_text()[-2000:]}"
                    raise RuntimeError(message) from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


OPENED: list[SSEReader | Api] = []  # closed after each test (tests/web/conftest.py)


def close_opened() -> None:
    """Closes every client a test opened, also when it failed half-way: a socket left to the
    garbage collector fails whichever test runs next (warnings are errors)."""
    while OPENED:
        OPENED.pop().close()


@dataclass(frozen=True)
class Received:
    id: int
    event: str
    data: dict[str, Any]


class SSEReader:
    """Reads an event stream in a thread; every event passes the no-hidden-card check."""

    def __init__(self, url: str, headers: dict[str, str] | None = None, html: bool = False) -> None:
        self.url = url
        self.html = html  # data is an HTML fragment: kept as {"html": text}
        self.headers = headers or {}
        self.events: queue.Queue[Received] = queue.Queue()
        self.status: int | None = None
        self.errors: list[str] = []  # events that failed the no-hidden-card check
        self.opened = threading.Event()
        self._client = httpx.Client(timeout=httpx.Timeout(30.0, connect=5.0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        OPENED.append(self)
        self._thread.start()
        assert self.opened.wait(10), "the stream did not open"

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self.url, headers=self.headers) as answer:
                self.status = answer.status_code
                self.content_type = answer.headers.get("content-type", "")
                self.opened.set()
                fields: dict[str, str] = {}
                for line in answer.iter_lines():
                    if self._stop.is_set():
                        return
                    if not line:
                        if "data" in fields and "id" in fields:
                            data = self._data(fields)
                            self.events.put(
                                Received(int(fields["id"]), fields.get("event", ""), data)
                            )
                        fields = {}
                        continue
                    if line.startswith(":"):
                        continue
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "data" and "data" in fields:  # a multi-line data field
                        value = fields["data"] + "\n" + value
                    fields[name] = value
        except (httpx.HTTPError, RuntimeError, ValueError):
            self.opened.set()
        finally:
            self._client.close()

    def _data(self, fields: dict[str, str]) -> dict[str, Any]:
        if self.html:
            text = fields["data"]
            if "pile-" in text or 'class="b"' in text:
                self.errors.append(f"an event fragment shows a pile: {text[:200]}")
            return {"html": text}
        data: dict[str, Any] = json.loads(fields["data"])
        try:
            check_event(fields.get("event", "message"), data)
        except AssertionError as exc:
            self.errors.append(str(exc))
        return data

    def take(self, count: int, timeout: float = 10.0) -> list[Received]:
        out: list[Received] = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                out.append(self.events.get(timeout=left))
            except queue.Empty:
                break
        assert not self.errors, self.errors
        return out

    def quiet(self, seconds: float = 0.5) -> list[Received]:
        """Whatever else arrives within ``seconds`` (expected: nothing)."""
        return self.take(1_000, seconds)

    def close(self) -> None:
        """Stops reading; the thread ends at the stream's next line (a ping at the latest) or
        when the server stops, and holds nothing the test needs."""
        self._stop.set()
        self._thread.join(0.1)


class Api:
    """A player of the JSON API on a real server."""

    def __init__(self, base: str, name: str | None = None) -> None:
        self.http = httpx.Client(base_url=base, timeout=10.0)
        OPENED.append(self)
        answer = self.http.post("/api/players", json={"name": name} if name else {})
        assert answer.status_code == 201, answer.text
        self.player = answer.json()
        self.http.headers["Authorization"] = f"Bearer {self.player['token']}"

    @property
    def name(self) -> str:
        return str(self.player["name"])

    def post(self, url: str, **kwargs: Any) -> Any:
        return self.http.post(url, **kwargs)

    def get(self, url: str) -> Any:
        return self.http.get(url)

    def ok(self, method: str, url: str, status: int = 200, **kwargs: Any) -> Any:
        answer = self.http.request(method, url, **kwargs)
        assert answer.status_code == status, answer.text
        return answer.json()

    def play_any(self, game_id: str) -> dict[str, Any]:
        """Plays the first legal move of the game; returns the new state."""
        state = self.ok("GET", f"/api/games/{game_id}")
        chosen = state["legal_moves"][0]
        body = {
            "from": chosen["from"],
            "to": chosen["to"],
            "count": chosen["count"],
            "version": state["version"],
        }
        result: dict[str, Any] = self.ok("POST", f"/api/games/{game_id}/moves", json=body)
        return result

    def close(self) -> None:
        self.http.close()
