"""Admission that protects moves (app/web/http/limits.py): metered classes that shed at once
when full, moves that never wait behind them, streams that give their turn back once open, and
per-address caps on requests and streams; and the rate limits of the costly actions.

The middleware is driven directly on one event loop, over an inner app whose requests are held
until the test lets them go: which requests are under way is decided by the test, not by time.
A refusal that is "at once" is one that comes back while the requests ahead of it are still
held and nobody waits in the class's queue (the queue timeout here is an hour)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.main import create_app
from app.web.http import limits as limits_module
from app.web.http.limits import Admission
from tests.aio import run, until
from tests.settings import suite_settings
from tests.web.support import error_code, new_player

HOUR_MS = 3_600_000


@dataclass
class Held:
    """An inner app: a request whose path is in :attr:`hold` or ends in ``/hold`` (or any
    stream) waits for :attr:`release`; a stream sends its headers first, as an event stream
    does."""

    hold: tuple[str, ...] = ()
    release: asyncio.Event = field(default_factory=asyncio.Event)
    entered: int = 0
    inside: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.entered += 1
        self.inside.set()
        path = scope["path"]
        stream = path.endswith("/events")
        if stream:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        if path in self.hold or path.endswith("/hold") or stream:
            await self.release.wait()
        if not stream:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


@dataclass
class Answer:
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)


async def call(app: Any, path: str, client: str = "10.0.0.1") -> Answer:
    answer = Answer()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}

    scope = {"type": "http", "path": path, "headers": [], "client": (client, 5000)}
    await app(scope, receive, send)
    return answer


def gate(inner: Held, **overrides: Any) -> Admission:
    values: dict[str, Any] = {
        "threads": 2,
        "expensive": 1,
        "expensive_share": 1.0,
        "queue_timeout_ms": HOUR_MS,
        "retry_after": 2,
        "hints": 1,
        "stream_opens": 1,
        "metered_queue": 0,
        "client_concurrency": 100,
        "client_streams": 100,
        "enforce_retry_after": False,  # (tested on its own, with a clock of the test's)
    }
    values.update(overrides)
    return Admission(inner, **values)


async def held(app: Admission, inner: Held, path: str, client: str = "10.0.0.1") -> Any:
    """Starts a request and returns once the inner app has it (it is then held)."""
    before = inner.entered
    task = asyncio.ensure_future(call(app, path, client))
    while inner.entered == before:
        inner.inside.clear()
        await inner.inside.wait()
    return task


async def at_once(app: Admission, path: str, client: str = "10.0.0.1") -> Answer:
    # A hang guard only: a refusal at once takes microseconds, a queued request an hour.
    return await asyncio.wait_for(call(app, path, client), 30)


def test_a_full_hint_class_sheds_at_once_and_moves_go_on() -> None:
    async def scenario() -> None:
        inner = Held(hold=("/api/games/g1/hint",))
        app = gate(inner)
        first = await held(app, inner, "/api/games/g1/hint")
        refused = await at_once(app, "/games/g2/hint")
        assert refused.status == 503 and refused.headers["retry-after"] == "2"
        assert not first.done()
        # Moves, boards and new games take the general gate: never behind a hint.
        assert (await at_once(app, "/api/games/g3/moves")).status == 200
        assert (await at_once(app, "/games/g3/board")).status == 200
        inner.release.set()
        assert (await first).status == 200
        assert (await at_once(app, "/api/games/g2/hint")).status == 200  # its turn is free

    run(scenario())


def test_an_analysis_waits_in_a_class_of_its_own_and_holds_back_no_page() -> None:
    async def scenario() -> None:
        inner = Held(hold=("/games/g1/analysis",))
        app = gate(inner, metered_queue=1)
        first = await held(app, inner, "/games/g1/analysis")
        # An analysis waits for a solver worker's search, seconds long: the pages of the
        # expensive class (a deal page, a replay) and moves go on meanwhile.
        assert (await at_once(app, "/deal/corners/7")).status == 200
        assert (await at_once(app, "/games/g2/replay")).status == 200
        assert (await at_once(app, "/api/games/g2/moves")).status == 200
        waiting = asyncio.ensure_future(call(app, "/api/games/g3/analysis"))
        await until(lambda: app._gates_here().metered["analyses"].waiting == 1)
        refused = await at_once(app, "/games/g4/analysis")
        assert refused.status == 503 and int(refused.headers["retry-after"]) >= 1
        assert not first.done() and not waiting.done()
        inner.release.set()
        assert (await first).status == 200
        assert (await waiting).status == 200

    run(scenario())


@pytest.mark.parametrize(
    "path",
    [
        "/games/g/replay",
        "/api/games/g/solution",
        "/api/games/g/try-again",
        "/leaderboard",
        "/api/leaderboard",
        "/players/someone",
        "/deal/corners/7",
        "/api/deals/corners/7",
        "/my-games",
    ],
)
def test_every_growing_route_is_metered_and_a_flood_of_it_is_shed_at_once(path: str) -> None:
    async def scenario() -> None:
        inner = Held(hold=(path,))
        app = gate(inner, metered_queue=1)
        first = await held(app, inner, path)
        # One more may wait its turn (METERED_QUEUE=1); the next is refused at once.
        waiting = asyncio.ensure_future(call(app, path))
        await until(lambda: app._gates_here().metered["expensive"].waiting == 1)
        refused = await at_once(app, path)
        assert refused.status == 503 and int(refused.headers["retry-after"]) >= 1
        assert not first.done() and not waiting.done()
        assert (await at_once(app, "/api/games/g/moves")).status == 200
        inner.release.set()
        assert (await first).status == 200
        assert (await waiting).status == 200

    run(scenario())


def test_a_stream_gives_its_turn_back_once_open_and_streams_count_apart() -> None:
    async def scenario() -> None:
        inner = Held()
        app = gate(inner, stream_opens=1, client_concurrency=1, client_streams=2)
        # Two streams open one after the other through a class of one: the first gave its
        # turn back with its headers.
        streams = [await held(app, inner, "/rooms/ABCDEF/events") for _ in range(2)]
        assert not any(s.done() for s in streams)
        # A third from the same address is beyond CLIENT_STREAMS: 429 at once.
        refused = await at_once(app, "/rooms/ABCDEF/events")
        assert refused.status == 429 and refused.headers["retry-after"] == "1"
        # Held streams are not requests: the same address still gets its move in.
        assert (await at_once(app, "/api/games/g/moves")).status == 200
        # Another address opens its stream.
        other = await held(app, inner, "/rooms/ABCDEF/events", client="10.0.0.2")
        inner.release.set()
        assert [(await s).status for s in [*streams, other]] == [200, 200, 200]

    run(scenario())


def test_one_address_beyond_its_concurrency_gets_429_and_others_go_on() -> None:
    async def scenario() -> None:
        inner = Held()
        app = gate(inner, client_concurrency=3)
        flood = [await held(app, inner, f"/api/games/g{i}/hold") for i in range(3)]
        refused = await at_once(app, "/api/games/g/moves")
        assert refused.status == 429 and refused.headers["retry-after"] == "1"
        assert (await at_once(app, "/api/games/g/moves", client="10.0.0.9")).status == 200
        inner.release.set()
        assert [(await f).status for f in flood] == [200] * 3
        # Its requests done, the address is let in again (and nothing is left counted).
        assert (await at_once(app, "/api/games/g/moves")).status == 200
        gates = app._gates_here()
        assert gates.requests == {} and gates.open_streams == {}

    run(scenario())


def test_a_full_general_gate_still_queues_within_the_timeout() -> None:
    """Moves keep the contract's bounded wait: they queue for a turn (QUEUE_TIMEOUT_MS), they
    are not shed at once as metered requests are."""

    async def scenario() -> None:
        inner = Held()
        app = gate(inner, threads=1)  # 4 requests at once
        ahead = [await held(app, inner, f"/api/games/g{i}/hold") for i in range(4)]
        queued = asyncio.ensure_future(call(app, "/api/games/g/moves"))
        gates = app._gates_here()
        await until(lambda: gates.requests.get("10.0.0.1") == 5)
        assert not queued.done()
        inner.release.set()
        assert (await queued).status == 200
        assert [(await a).status for a in ahead] == [200] * 4

    run(scenario())


def test_a_client_back_before_its_retry_after_gets_its_refusal_when_it_is_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flood that retries at once is answered once per Retry-After per connection; the
    clock and the wait are the test's own (no test waits on time)."""
    clock = {"now": 1000.0}
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)
        clock["now"] += seconds

    monkeypatch.setattr(limits_module, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(limits_module, "sleep", wait)

    async def scenario(enforce: bool) -> list[float]:
        waits.clear()
        inner = Held(hold=("/api/games/g1/hint",))
        app = gate(inner, retry_after=2, enforce_retry_after=enforce)
        first = await held(app, inner, "/api/games/g1/hint")
        assert (await at_once(app, "/api/games/g2/hint")).status == 503  # told: 2 s
        clock["now"] += 0.5
        # Back after 0.5 s and refused again: the refusal comes when the 2 s are over.
        assert (await at_once(app, "/api/games/g2/hint")).status == 503
        # Another address is refused at once; a request let in never waits.
        assert (await at_once(app, "/api/games/g2/hint", client="10.0.0.7")).status == 503
        assert (await at_once(app, "/api/games/g3/moves")).status == 200
        clock["now"] += 5  # well past it: at once again
        assert (await at_once(app, "/api/games/g2/hint")).status == 503
        inner.release.set()
        assert (await first).status == 200
        return list(waits)

    assert run(scenario(True)) == [1.5]
    assert run(scenario(False)) == []


# -- rate limits of the costly actions ---------------------------------------------------------


@pytest.fixture()
def limited(db_url: str) -> Iterator[FastAPI]:
    application = create_app(
        suite_settings(
            db_url,
            rate_limit_hints="2/minute",
            rate_limit_analyses="2/minute",
            rate_limit_room_joins="2/minute",
            rate_limit_costly_address="4/minute",
        )
    )
    yield application
    application.state.limits.clear()
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


def _limited(response: Any) -> None:
    assert error_code(response, 429) == "rate_limited"
    assert 1 <= int(response.headers["retry-after"]) <= 60


def test_hints_and_analyses_are_limited_per_player_and_per_address(limited: FastAPI) -> None:
    with TestClient(limited) as c:
        one, two = new_player(c), new_player(c)
        url = "/api/games/abcdefghijklmnop"
        # Counted before the game is looked up: an unknown game costs a hint too.
        assert [c.get(f"{url}/hint", headers=one).status_code for _ in range(2)] == [404, 404]
        _limited(c.get(f"{url}/hint", headers=one))
        assert c.get(f"{url}/analysis", headers=one).status_code == 404  # a limit of its own
        # Another player has hints of their own, until the address's limit of all costly
        # actions together (4 a minute: 3 counted above, a refused one is not).
        assert c.get(f"{url}/hint", headers=two).status_code == 404
        _limited(c.get(f"{url}/hint", headers=two))


def test_room_joins_and_leaves_are_limited_per_player(limited: FastAPI) -> None:
    with TestClient(limited) as c:
        owner, guest = new_player(c), new_player(c)
        room = c.post("/api/rooms", json={"game": "corners"}, headers=owner).json()["code"]
        assert c.post(f"/api/rooms/{room}/join", headers=guest).status_code == 200
        assert c.post(f"/api/rooms/{room}/leave", headers=guest).status_code == 200
        _limited(c.post(f"/api/rooms/{room}/join", headers=guest))
