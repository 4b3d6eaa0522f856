"""Request size limits (413, 431), the bounded wait for a turn (503, not a pile-up), the gate of
the expensive pages, and the deadline for reading a request on a slow connection."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.serve import TimedHttpProtocol
from app.services.errors import NotFound
from app.web.http import limits as limits_module
from app.web.http.limits import Admission
from tests.waiting import wait_until
from tests.web.support import error_code, move, snapshot, start


def test_headers_larger_than_the_limit_are_431(api: TestClient, client: TestClient) -> None:
    big = {"Cookie": "ph_session=" + "x" * 20_000}
    assert error_code(api.get("/api/leaderboard", headers=big), 431) == "headers_too_large"
    page = client.get("/", headers=big)
    assert page.status_code == 431 and "headers" in page.text
    assert page.headers["content-type"].startswith("text/html")


def test_a_body_larger_than_the_limit_is_413_and_changes_nothing(
    api: TestClient, app: FastAPI
) -> None:
    game = start(api, "corners", 21)
    before = snapshot(app, api, game["id"])
    padding = "x" * 70_000
    body = {"from": "t1", "to": "f1", "version": 0, "padding": padding}
    url = f"/api/games/{game['id']}/moves"
    assert error_code(api.post(url, json=body), 413) == "payload_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts what arrives
        yield b'{"from": "t1", "to": "f1", "version": 0, "padding": "'
        for _ in range(10):
            yield b"x" * 10_000
        yield b'"}'

    chunked = api.post(url, content=chunks(), headers={"Content-Type": "application/json"})
    assert error_code(chunked, 413) == "payload_too_large"
    assert snapshot(app, api, game["id"]) == before


def test_a_big_form_is_413_before_it_is_parsed(client: TestClient) -> None:
    client.get("/")
    token = client.cookies.get("csrftoken") or ""
    answer = client.post("/games", data={"game": "corners", "csrftoken": token, "x": "y" * 100_000})
    assert answer.status_code == 413
    assert "larger than" in answer.text


# -- waiting for a turn ------------------------------------------------------------------------


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def gated(db_url: str, request: pytest.FixtureRequest) -> Iterator[FastAPI]:
    application = create_app(
        Settings(
            app_env="test",
            database_url=db_url,
            threadpool_size=request.param,
            queue_timeout_ms=100,
            # A second refusal to one address would wait out the first one's Retry-After, in
            # real seconds; that hold is tested on its own
            # (tests/web/http/test_limits_admission.py).
            enforce_retry_after=False,
        )
    )
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


class _Blocked:
    """``games.<name>`` made to wait until :meth:`release`, then say 'not found'; the test waits
    for the requests it sent to be inside it (no guess at how long that takes)."""

    def __init__(self, application: FastAPI, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self._release = threading.Event()
        self._entered = threading.Semaphore(0)
        monkeypatch.setattr(application.state.services.games, name, self._wait)

    def _wait(self, *_: Any, **__: Any) -> Any:
        self._entered.release()
        self._release.wait(10)
        raise NotFound("There is no game with that id.")

    def entered(self, count: int) -> None:
        for _ in range(count):
            assert self._entered.acquire(timeout=30), "a request did not reach the service"

    def release(self) -> None:
        self._release.set()


def test_a_burst_of_expensive_pages_waits_its_turn_and_moves_go_on(
    gated: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    if gated.state.settings.threadpool_size < 2:
        pytest.skip("moves need a thread beside the expensive page's")
    with TestClient(gated) as c, ThreadPoolExecutor(2) as pool:
        token = c.post("/api/players", json={}).json()["token"]
        c.headers["Authorization"] = f"Bearer {token}"
        game = start(c, "corners", 22)
        blocked = _Blocked(gated, monkeypatch, "replay_view")
        try:
            first = pool.submit(c.get, "/api/games/abcdefghijklmnop/replay")
            blocked.entered(1)  # the first replay holds the worker's only expensive turn
            _unavailable(c.get("/api/games/abcdefghijklmnop/replay"))
            _unavailable(c.get("/api/leaderboard"))
            m = game["legal_moves"][0]
            assert move(c, game["id"], f"{m['from']}-{m['to']}", 0).status_code == 200
        finally:
            blocked.release()
        assert first.result(timeout=60).status_code == 404


def test_requests_beyond_the_workers_queue_are_answered_503(
    gated: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Four requests per thread are let in at once; the next waits 100 ms, then is answered 503.
    admitted = 4 * gated.state.settings.threadpool_size
    with TestClient(gated) as c, ThreadPoolExecutor(admitted) as pool:
        blocked = _Blocked(gated, monkeypatch, "get")
        try:
            held = [pool.submit(c.get, f"/api/games/abcdefghijklmn{i:02}") for i in range(admitted)]
            wait_until(lambda: _every_turn_taken(gated), "every turn taken")
            _unavailable(c.get("/api/games/abcdefghijklmnop"))
            assert c.get("/healthz").status_code == 200  # health checks are never queued
        finally:
            blocked.release()
        assert [f.result(timeout=60).status_code for f in held] == [404] * admitted


def _every_turn_taken(application: FastAPI) -> bool:
    """Whether the app's gate would make the next request wait just now."""
    layer: Any = application.middleware_stack
    while not isinstance(layer, Admission):
        layer = layer.app
    made = list(layer._gates.values())  # the gates come with the first request
    return bool(made) and all(gates.general.locked() for gates in made)


def _unavailable(response: Any) -> None:
    assert error_code(response, 503) == "unavailable"
    assert int(response.headers["retry-after"]) >= 1


# -- slow connections ------------------------------------------------------------------------------


class _ReadClock:
    """The clock of the test server's read deadlines: the test moves it (no test waits on time).

    Timers are started on the server's event loop thread and fired there too, so that a timer
    cancelled in the meantime (the request came in full) never fires.
    """

    def __init__(self) -> None:
        self.now = 0.0
        self._lock = threading.Lock()
        self._timers: list[_ReadTimer] = []

    def start(self, loop: asyncio.AbstractEventLoop, delay: float, callback: Any) -> _ReadTimer:
        timer = _ReadTimer(loop, callback)
        with self._lock:
            timer.due = self.now + delay
            self._timers.append(timer)
        return timer

    def armed(self) -> int:
        with self._lock:
            return sum(not t.cancelled and not t.fired for t in self._timers)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds
            due = [t for t in self._timers if not t.fired and t.due <= self.now]
            for timer in due:
                timer.fired = True
        for timer in due:
            timer.loop.call_soon_threadsafe(timer.fire)


class _ReadTimer:
    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Any) -> None:
        self.loop, self.callback = loop, callback
        self.due = 0.0
        self.cancelled = self.fired = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        if not self.cancelled:
            self.callback()


READ_CLOCK = _ReadClock()


class _Quick(TimedHttpProtocol):
    read_timeout = 0.3

    def start_timer(self, delay: float, callback: Any) -> _ReadTimer:
        return READ_CLOCK.start(self.loop, delay, callback)


async def _hello(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]}
    )
    await send({"type": "http.response.body", "body": b"hello"})


@pytest.fixture()
def slow_server() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(
        _hello, host="127.0.0.1", port=port, http=_Quick, lifespan="off", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, "the test server's start")
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(30)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET / HTTP/1.1\r\nHost: x\r\n", b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nab"],
    ids=["silent", "slow-headers", "slow-body"],
)
def test_a_connection_that_does_not_send_its_request_in_time_is_closed(
    slow_server: int, sent: bytes
) -> None:
    armed = READ_CLOCK.armed()
    with socket.create_connection(("127.0.0.1", slow_server)) as sock:
        sock.sendall(sent)
        wait_until(lambda: READ_CLOCK.armed() > armed, "the connection's read deadline")
        READ_CLOCK.advance(0.3)  # the deadline passes
        assert _closed_by_server(sock)


def test_a_prompt_request_is_answered_on_the_timed_protocol(slow_server: int) -> None:
    with socket.create_connection(("127.0.0.1", slow_server)) as sock:
        sock.settimeout(30)
        READ_CLOCK.advance(0.2)  # within the deadline
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"hello")
        READ_CLOCK.advance(0.5)  # a handled request leaves the connection to the keep-alive timeout
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")


def test_replays_beyond_their_share_of_time_are_refused_at_once(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 10% of the worker's time, a second saved up; each replay takes 0.6 s of the budget's
    # clock here (a clock of the test's own: how busy the machine is changes nothing).
    application = create_app(
        Settings(
            app_env="test",
            database_url=db_url,
            expensive_share=0.1,
            enforce_retry_after=False,  # as in ``gated`` above
        )
    )
    games = application.state.services.games
    clock = {"now": 1000.0}
    monkeypatch.setattr(limits_module, "monotonic", lambda: clock["now"])

    def slow(*_: Any) -> Any:
        clock["now"] += 0.6
        raise NotFound("There is no game with that id.")

    monkeypatch.setattr(games, "replay_view", slow)
    url = "/api/games/abcdefghijklmnop/replay"
    try:
        with TestClient(application) as c:
            assert c.get(url).status_code == 404  # 1 s saved, 0.6 s spent
            assert c.get(url).status_code == 404  # 0.46 s left (0.06 earned), 0.6 spent
            _unavailable(c.get(url))  # 0.08 s in debt: refused at once
            refused = c.get("/games/abcdefghijklmnop/replay")
            assert refused.status_code == 503 and "busy" in refused.text
            assert int(refused.headers["retry-after"]) >= 1
            assert c.get("/api/leaderboard").status_code == 200  # other pages go on
            # 0.1 s of budget a second pays the debt back in 0.8 s; a refused request costs
            # nothing.
            clock["now"] += 0.5
            _unavailable(c.get(url))
            clock["now"] += 0.5
            assert c.get(url).status_code == 404
    finally:
        application.state.services.engine.dispose()
        application.state.services.move_store.close()


def test_a_share_of_all_the_time_never_refuses_an_expensive_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """EXPENSIVE_SHARE=1.0 keeps no budget: a render slower than the second saved up (a busy
    machine) no longer gets the next replay refused (the functional tests' setting)."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    # A render of 1.2 s on the budget's clock (a clock of the test's own).
    clock = {"now": 1000.0}
    monkeypatch.setattr(limits_module, "monotonic", lambda: clock["now"])

    def slow(request: Any) -> PlainTextResponse:
        clock["now"] += 1.2
        return PlainTextResponse("rendered")

    inner = Starlette(routes=[Route("/games/{game_id}/replay", slow)])
    gated = Admission(
        inner, threads=2, expensive=1, expensive_share=1.0, queue_timeout_ms=2000, retry_after=1
    )
    with TestClient(gated) as client:
        assert [client.get("/games/g/replay").status_code for _ in range(2)] == [200, 200]
    budgeted = Admission(
        inner, threads=2, expensive=1, expensive_share=0.1, queue_timeout_ms=2000, retry_after=1
    )
    with TestClient(budgeted) as client:  # with a share below all, the second is refused
        assert [client.get("/games/g/replay").status_code for _ in range(2)] == [200, 503]
