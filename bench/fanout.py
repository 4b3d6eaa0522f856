"""What one room event costs the app per html event stream, in process (issue 26).

    .venv/bin/python bench/fanout.py --streams 500 --events 30

``bench/floods.py`` measures delivery to 1,000 streams over sockets, beside paced moves: the
whole picture, but 75 s a run and noisy. This measures the part that grows with the streams:
the app from ``create_app`` (every middleware, the lifespan running, production's paths) is
called directly as an ASGI application, without uvicorn or sockets, against a fresh PostgreSQL
database. It opens ``--streams`` ``view=html`` (or, ``--view json``, JSON) event streams of one
room (as a browser's EventSource does, a spectator each), then has API players join and leave
the room ``--events`` times, one change at a time, and waits each time until every stream has
read the change's event. For each event it takes the wall time from the change's answer to the
last stream's read, and the process's CPU time over that fan-out divided by the streams: what
one event costs per stream (PostgreSQL's own CPU is not counted; the room is read once per
event whatever the streams). It prints the medians and p90s over the events.

With ``--ab send``, ``--ab contexts`` or ``--ab push``, the events alternate between the app's
way and the way before a change, in one process, so that both ways see the same streams and the
same moment of the machine: ``send``, the streams' send (``EventStream``: a deadline only for a
send that waits) against a deadline on every send (before 2026-11-29); ``contexts``, what the
room shows a viewer decided once per member and once for everyone else
(``LiveFragments.context``) against once per stream (before 2026-11-29); ``push``, each event
pushed to the idle streams by the broker's delivery (``Subscription.push``) against queued for
every stream's own task (before 2026-11-29, 04:00 UTC). It reports each way's CPU per stream and
in how many pairs of events the app's way cost less.

With ``--turns``, a probe task also times every turn of the event loop during each fan-out
(it awaits ``asyncio.sleep(0)`` over and over: each wait is one turn, everything that was ready
before it ran first): the longest turn is how long a move that became ready meanwhile (its
request read, its database answer in) waited behind the streams before it could go on. The
probe's own turns add a little to the CPU figure, so it is off by default.

Without sockets, uvicorn's own share (its ``send``, the transport's write) is not in these
figures; with them (``bench/floods.py``) an event took about 0.13 ms a stream on 2026-11-27.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app_cpu import Client, in_process
from sse_starlette.sse import SendTimeoutError
from starlette.types import Message, Send

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_fanout"
_EVENT_ID = re.compile(rb"^id: ?([0-9]+)\r?$", re.MULTILINE)


class Turns:
    """The event loop's turns while ``running`` is set: the longest one per fan-out (ms)."""

    def __init__(self) -> None:
        self.running = asyncio.Event()
        self.longest = 0.0

    async def probe(self) -> None:
        while True:
            await self.running.wait()
            started = time.perf_counter()
            await asyncio.sleep(0)
            if self.running.is_set():
                self.longest = max(self.longest, 1000 * (time.perf_counter() - started))


class Streams:
    """The open streams' reads: how many streams have read each event id, and when the last
    one did."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.opened = 0
        self.refused = 0
        self.reads: dict[int, int] = {}
        self.complete: dict[int, float] = {}
        self.changed = asyncio.Event()
        self.closing = asyncio.Event()

    def read(self, event_id: int) -> None:
        count = self.reads.get(event_id, 0) + 1
        self.reads[event_id] = count
        if count == self.expected:
            self.complete[event_id] = time.perf_counter()
            self.changed.set()


async def stream(app: Any, path: str, query: bytes, streams: Streams) -> bool:
    """One html event stream, open until ``streams.closing``; False if it was refused."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
        "query_string": query, "root_path": "",
        "headers": [(b"host", b"bench"), (b"accept", b"text/event-stream")],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80), "state": {},
    }  # fmt: skip
    asked = False
    status = 0
    opened = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await streams.closing.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            opened.set()
        elif message["type"] == "http.response.body":
            for found in _EVENT_ID.finditer(message.get("body", b"")):
                streams.read(int(found.group(1)))
            if not message.get("more_body", False):
                opened.set()

    task = asyncio.create_task(app(scope, receive, send))
    await opened.wait()
    if status != 200:
        await task
        return False
    streams.opened += 1
    return True


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    from app.config import get_settings
    from app.db.broker import Subscription
    from app.main import create_app
    from app.web.pages.live import EventStream
    from app.web.pages.rooms import LiveFragments

    app = create_app(get_settings())
    streams = Streams(args.streams)
    costs: list[dict[str, Any]] = []
    async with app.router.lifespan_context(app):
        players = []
        for _ in range(8):
            client = Client(app)
            _, created = await client.call("player", "POST", "/api/players", {})
            client.token = created["token"]
            players.append(client)
        status, room = await players[0].call("room", "POST", "/api/rooms", {"game": "corners"})
        assert status == 201, room
        code = room["code"]
        path = f"/rooms/{code}/events"
        while streams.opened < args.streams:
            # The opening of streams is metered (a few at a time): refused ones try again.
            wanted = min(4, args.streams - streams.opened)
            opened = await asyncio.gather(
                *(stream(app, path, f"view={args.view}".encode(), streams) for _ in range(wanted))
            )
            streams.refused += opened.count(False)
        inside: set[int] = set()
        turns = Turns()
        prober = asyncio.create_task(turns.probe()) if args.turns else None
        owner, name, before = {
            None: (EventStream, "_send_with_timeout", EventStream._send_with_timeout),
            "send": (EventStream, "_send_with_timeout", every_send),
            "contexts": (LiveFragments, "context", every_stream_context),
            "push": (Subscription, "offer", queued_offer),
        }[args.ab]
        ways = {"the app's": getattr(owner, name), "before": before}
        for n in range(args.warmup + args.events):
            way = "the app's" if args.ab is None or n % 2 == 0 else "before"
            setattr(owner, name, ways[way])
            who = 1 + n % 7
            verb = "leave" if who in inside else "join"
            seen = max(streams.reads, default=0)
            cpu0 = time.process_time()
            status, answer = await players[who].call(verb, "POST", f"/api/rooms/{code}/{verb}")
            assert status == 200, answer
            answered = time.perf_counter()
            turns.longest = 0.0
            turns.running.set()
            inside.symmetric_difference_update({who})
            while not any(i > seen for i in streams.complete):
                streams.changed.clear()
                await asyncio.wait_for(streams.changed.wait(), timeout=30)
            done = max(t for i, t in streams.complete.items() if i > seen)
            turns.running.clear()
            cpu = time.process_time() - cpu0
            if n >= args.warmup:
                costs.append(
                    {
                        "fan-out ms": 1000 * (done - answered),
                        "CPU us per stream": 1e6 * cpu / args.streams,
                        "longest turn ms": turns.longest,
                        "way": way,
                    }
                )
        setattr(owner, name, ways["the app's"])
        if prober is not None:
            prober.cancel()
        streams.closing.set()
        await asyncio.sleep(0.5)  # the streams see their disconnect and end

    def summary(name: str, way: str | None = None) -> dict[str, float]:
        values = sorted(c[name] for c in costs if way in (None, c["way"]))
        return {
            "median": round(statistics.median(values), 1),
            "p90": round(values[int(0.9 * (len(values) - 1))], 1),
        }

    turns_figures = (
        {"longest turn of the event loop per fan-out, ms": summary("longest turn ms")}
        if args.turns
        else {}
    )
    return {
        "streams": args.streams,
        "view": args.view,
        "events": len(costs),
        "openings refused and retried": streams.refused,
        "fan-out ms (change answered -> every stream has read it)": summary("fan-out ms"),
        "CPU us per stream per event (the change's own handling included)": summary(
            "CPU us per stream"
        ),
        **turns_figures,
        **(ab(costs, summary) if args.ab else {}),
    }


async def every_send(self: Any, send: Send, message: Message) -> None:
    """``EventStream``'s send as it was before 2026-11-29 (commit 985b34f): asyncio's timeout
    around every send, whether or not it waits."""
    if self.send_timeout is None:
        await send(message)
        return
    deadline = asyncio.timeout(self.send_timeout)
    try:
        async with deadline:
            await send(message)
    except TimeoutError:
        if deadline.expired():
            raise SendTimeoutError() from None
        raise


def every_stream_context(
    self: Any, code: str, event_id: int, room: Any, viewer: str | None
) -> dict[str, Any]:
    """``LiveFragments.context`` as it was before 2026-11-29: made for every stream."""
    from app.web.pages.rooms import live_context

    return live_context(room, viewer)


def queued_offer(self: Any, row: Any) -> bool:
    """``Subscription.offer`` as it was before 2026-11-29 (commit 1704e7f): every event is
    queued for the stream's own task, none pushed."""
    self.enqueue(row)
    return False


def ab(costs: list[dict[str, Any]], summary: Any) -> dict[str, Any]:
    """Each way's CPU per stream, and in how many pairs of events (one each way, one after
    the other) the app's way cost less."""
    key = "CPU us per stream"
    app = [c[key] for c in costs if c["way"] == "the app's"]
    before = [c[key] for c in costs if c["way"] == "before"]
    return {
        "CPU us per stream per event, by way": {
            way: summary(key, way) for way in ("the app's", "before")
        },
        "pairs the app's way cost less": f"{sum(a < b for a, b in zip(app, before))} of "
        f"{min(len(app), len(before))}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=500, help="html event streams of a room")
    parser.add_argument("--events", type=int, default=30, help="measured joins and leaves")
    parser.add_argument("--warmup", type=int, default=5, help="joins and leaves before")
    parser.add_argument(
        "--view",
        choices=("html", "json"),
        default="html",
        help="the streams' view: html fragments (one room read per event) or JSON",
    )
    parser.add_argument(
        "--turns", action="store_true", help="time the event loop's turns during each fan-out"
    )
    parser.add_argument(
        "--ab",
        choices=("send", "contexts", "push"),
        help="events alternate between the app's way and the way before a change",
    )
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument("--log", type=Path, default=Path(os.devnull), help="the app's log lines")
    args = parser.parse_args(argv)
    print(json.dumps(in_process(args, measure), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
