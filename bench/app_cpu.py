"""The app's own CPU per move, in process: what a move costs the app, whatever else runs.

    .venv/bin/python bench/app_cpu.py --moves 3000 --concurrency 8 [--path browser]

On a machine shared with other work, moves per second mostly measure the neighbours. This
measures the app's CPU time instead (``time.process_time`` of this process: every thread, the
thread pool's included; PostgreSQL's backends are processes of their own and not counted):
the app built by ``create_app`` (every middleware, the production settings' paths, its
lifespan running, so that moves take the event loop's path where it has one) is called
directly as an ASGI application, without uvicorn or sockets, by ``--concurrency`` clients at
once. Each client is an API player playing real games move by move (``bench/load.py``'s move
choice, an ``Idempotency-Key`` on every move, a resignation when no move is left) or, with
``--path browser``, a browser (a session cookie, the page's CSRF token, each move a form post
answered with the board's HTMX fragments, read back as ``bench/load.py`` reads them), against a
fresh PostgreSQL database (``ph_bench_*``, dropped and recreated). It reports the app's CPU
per move (the median of ``--rounds`` windows of ``--moves`` moves each), the moves' wall time
and the answers by status. Rate limits stay on (in memory: no Redis here), raised far above
what it does.

``--ab-binding`` measures the direct binding of the move routes (app/web/direct.py) against
FastAPI's own in one process: the windows alternate, the routes bound directly in one and by
FastAPI in the next, so that both ways see the same games, database and moment of a machine
whose speed drifts between runs; it reports each way's median and how many pairs of windows
the direct binding won.

``--ab-getattr`` does the same for the templates' reads of a dict's keys (app/web/pages/
templating.py, ``FlatGlobals.getattr``) against Jinja2's own ``getattr``, which reads a key only
after looking for an attribute of that name has raised; then, since a whole move swings by more
than that, it renders the board move's fragment alone again from the contexts of up to 200 of
its moves, the two ways in turn, and reports each way's median CPU a render.

``--ab-remembered`` alternates windows between the app as built and the app with three of its
memories undone (issue 26, 2026-11-29): the session signer verifying every cookie's signature
(app/web/http/sessions.py), every game state text parsed again (app/services/state_texts.py),
and the pools' gauge counted by listeners at each checkout and checkin, as it was before
``observe.PoolGauges``.

The metrics are kept in prometheus-client's multiprocess files, as ``scripts/docker-start.sh``
runs the app (a directory of this run's own, unless ``PROMETHEUS_MULTIPROC_DIR`` names one).

Every request says ``Accept-Encoding`` as a browser does (the answers are read back
decompressed, in this process: a few microseconds of each move's CPU are the client's).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import BENCH_LIMITS, machine_facts
from load import CSRF_TOKEN, GAMES, Board, choose, fresh_database

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_bench_cpu"
ACCEPT_ENCODING = b"gzip, deflate, br, zstd"  # as a browser (and bench/load.py) sends it
Answer = tuple[int, Any]


class Client:
    """ASGI calls with a bearer token (the API) or a session cookie and its CSRF token (a
    browser), the answers' status and body."""

    def __init__(self, app: Any, token: str | None = None) -> None:
        self.app = app
        self.token = token
        self.cookie: bytes | None = None  # the browser's session cookie, as last set
        self.csrf: str | None = None
        self.location = ""
        self.statuses: Counter[str] = Counter()

    async def raw(
        self,
        what: str,
        method: str,
        path: str,
        data: bytes = b"",
        content_type: bytes | None = None,
        extra: tuple[tuple[bytes, bytes], ...] = (),
    ) -> tuple[int, bytes]:
        headers = [
            (b"host", b"bench"),
            (b"content-length", str(len(data)).encode()),
            (b"accept-encoding", ACCEPT_ENCODING),
            *extra,
        ]
        if content_type is not None:
            headers.append((b"content-type", content_type))
        if self.token:
            headers.append((b"authorization", f"Bearer {self.token}".encode()))
        if self.cookie is not None:
            headers.append((b"cookie", self.cookie))
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80), "state": {},
        }  # fmt: skip
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            await asyncio.Event().wait()  # no disconnect while the answer is written
            return {"type": "http.disconnect"}

        status, chunks, gzipped = 0, [], False

        async def send(message: dict[str, Any]) -> None:
            nonlocal status, gzipped
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message["headers"]:
                    if name == b"content-encoding":
                        gzipped = value == b"gzip"
                    elif name == b"set-cookie":
                        self.cookie = value.split(b";", 1)[0]
                    elif name == b"location":
                        self.location = value.decode()
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        self.statuses[f"{what} {status}"] += 1
        body = b"".join(chunks)
        return status, gzip.decompress(body) if gzipped else body

    async def call(
        self, what: str, method: str, path: str, body: Any = None, key: str | None = None
    ) -> Answer:
        """A JSON API call."""
        data = b"" if body is None else json.dumps(body).encode()
        extra = ((b"idempotency-key", key.encode()),) if key else ()
        kind = None if body is None else b"application/json"
        status, raw = await self.raw(what, method, path, data, kind, extra)
        return status, json.loads(raw) if raw else None

    async def form(self, what: str, path: str, fields: dict[str, str]) -> tuple[int, bytes]:
        """A form post as the board sends it (HTMX, the session's CSRF token)."""
        extra = (
            (b"hx-request", b"true"),
            (b"sec-fetch-site", b"same-origin"),
            (b"x-csrftoken", (self.csrf or "").encode()),
        )
        data = urlencode(fields).encode()
        return await self.raw(what, "POST", path, data, b"application/x-www-form-urlencoded", extra)


async def player(app: Any, seed: int, state: dict[str, Any]) -> None:
    rng = random.Random(seed)
    client = Client(app)
    _, created = await client.call("player", "POST", "/api/players", {})
    client.token = created["token"]
    state["clients"].append(client)
    while not state["stop"]:
        status, game = await client.call("start", "POST", "/api/games", {"game": rng.choice(GAMES)})
        if status != 201:
            continue
        while game["status"] == "playing" and not state["stop"]:
            if game["moves"] >= 200 or not game["legal_moves"]:
                await client.call("resign", "POST", f"/api/games/{game['id']}/resign")
                break
            body = {**choose(game["legal_moves"], rng), "version": game["version"]}
            path = f"/api/games/{game['id']}/moves"
            started = time.perf_counter()
            status, answer = await client.call("move", "POST", path, body, uuid.uuid4().hex)
            if status == 200:
                state["moves"] += 1
                state["latency"].append(time.perf_counter() - started)
                game = answer
            else:
                _, game = await client.call("read", "GET", f"/api/games/{game['id']}")


async def browser_player(app: Any, seed: int, state: dict[str, Any]) -> None:
    """A player in a browser (``--path browser``): the session cookie and the page's CSRF
    token, each move a form post answered with the board's HTMX fragments."""
    rng = random.Random(seed)
    client = Client(app)
    state["clients"].append(client)
    _, page = await client.raw("read", "GET", "/account")
    found = CSRF_TOKEN.search(page.decode())
    if found is None:
        raise SystemExit("no CSRF token on /account")
    client.csrf = found.group(1)
    while not state["stop"]:
        status, _ = await client.form("start", "/games", {"game": rng.choice(GAMES)})
        if status != 303:
            continue
        _, page = await client.raw("read", "GET", client.location)
        board = Board.read(page)
        while board is not None and board.status == "playing" and not state["stop"]:
            path = f"/games/{board.id}"
            if board.moves >= 200 or not board.legal:
                await client.form("resign", path + "/resign", {"version": str(board.version)})
                break
            chosen = choose(board.legal, rng)
            fields = {"from": chosen["from"], "to": chosen["to"], "count": str(chosen["count"])}
            started = time.perf_counter()
            status, data = await client.form(
                "move", path + "/moves", {**fields, "version": str(board.version)}
            )
            after = Board.read(data, board.moves + 1) if status == 200 else None
            if after is not None:
                state["moves"] += 1
                state["latency"].append(time.perf_counter() - started)
            else:
                _, page = await client.raw("read", "GET", path)
                after = Board.read(page, board.moves)
            board = after


PLAYERS = {"api": player, "browser": browser_player}


def lane_of(app: Any) -> tuple[Any, Any]:
    """The moves' lane (app/web/http/lane.py) in the built middleware stack, and the layer
    above it (whose ``app`` the A/B points at the lane or past it)."""
    from app.web.http.lane import MoveLane

    if app.middleware_stack is None:
        app.middleware_stack = app.build_middleware_stack()
    above = app.middleware_stack
    while not isinstance(above.app, MoveLane):
        above = above.app
    return above, above.app


def players_alive(tasks: list[asyncio.Task[None]]) -> None:
    """Stops the benchmark with the players' error once every player has stopped (a refusal it
    could not read a game from, say), instead of waiting for moves that will never come."""
    if all(task.done() for task in tasks):
        errors = [task.exception() for task in tasks if not task.cancelled()]
        raise SystemExit(f"every player stopped: {next((e for e in errors if e), None)!r}")


class Marks(Protocol):
    """Told when each measured window starts and ends (``bench/instructions.py`` counts the
    instructions between the two)."""

    def start(self, window: int) -> None: ...

    def end(self, window: int) -> None: ...


async def measure(args: argparse.Namespace, marks: Marks | None = None) -> dict[str, Any]:
    import jinja2
    from fastapi.routing import APIRoute

    from app.config import get_settings
    from app.main import create_app
    from app.web.direct import bind_directly, binder_of, unbind
    from app.web.pages.templating import FlatGlobals, templates

    app = create_app(get_settings())
    templates.env.auto_reload = False  # as in production (APP_ENV=development here)
    fragments: list[dict[str, Any]] = []  # board moves' contexts, for --ab-getattr
    if args.ab_getattr:
        respond = templates.TemplateResponse

        def kept(request: Any, name: str, context: dict[str, Any], **kw: Any) -> Any:
            if name == MOVE_FRAGMENT and len(fragments) < 200:
                fragments.append(dict(context))
            return respond(request, name, context, **kw)

        templates.TemplateResponse = kept  # type: ignore[method-assign, assignment]
    state: dict[str, Any] = {"stop": False, "moves": 0, "latency": [], "clients": []}
    windows = []
    async with app.router.lifespan_context(app):
        tasks = [
            asyncio.create_task(PLAYERS[args.path](app, args.seed + i, state))
            for i in range(args.concurrency)
        ]
        while state["moves"] < args.warmup:  # games started, caches and pools warm
            await asyncio.sleep(0.05)
            players_alive(tasks)
        direct = [r for r in app.router.routes if isinstance(r, APIRoute) and binder_of(r)]
        above, lane = lane_of(app)
        keys_first = FlatGlobals.getattr
        paired_windows = args.ab_binding or args.ab_lane or args.ab_getattr or args.ab_remembered
        forget = Forgetting(app) if args.ab_remembered else None
        for window in range(args.rounds * (2 if paired_windows else 1)):
            mode = "direct" if window % 2 == 0 else "fastapi"
            if args.ab_binding:  # the same process, games and moment, each way in turn
                for route in direct:
                    (bind_directly if mode == "direct" else unbind)(route)
            if args.ab_lane:  # the moves' lane in the stack, or left out of it
                above.app = lane if mode == "direct" else lane.app
            if args.ab_getattr:  # templates read a dict's keys first, or as Jinja2 does
                way = keys_first if mode == "direct" else jinja2.Environment.getattr
                FlatGlobals.getattr = way  # type: ignore[method-assign]
            if forget is not None:  # the three memories, or each piece done every time
                forget.undo() if mode == "direct" else forget.do()
            state["latency"].clear()
            if marks is not None:
                marks.start(window)
            moves0, cpu0, wall0 = state["moves"], time.process_time(), time.perf_counter()
            while state["moves"] - moves0 < args.moves:
                await asyncio.sleep(0.01)
                players_alive(tasks)
            moves = state["moves"] - moves0
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            if marks is not None:
                marks.end(window)
            latency = sorted(state["latency"])
            windows.append(
                {
                    **({"binding": mode} if args.ab_binding else {}),
                    **({"lane": mode == "direct"} if args.ab_lane else {}),
                    **({"dict keys first": mode == "direct"} if args.ab_getattr else {}),
                    **({"remembered": mode == "direct"} if args.ab_remembered else {}),
                    "moves": moves,
                    "app CPU ms/move": round(1000 * cpu / moves, 3),
                    "wall ms/move": round(1000 * wall / moves, 3),
                    "move p50 ms": round(1000 * latency[len(latency) // 2], 2),
                }
            )
        state["stop"] = True
        await asyncio.gather(*tasks, return_exceptions=True)
        FlatGlobals.getattr = keys_first  # type: ignore[method-assign]
        if forget is not None:
            forget.undo()
    renders = render_ab(fragments, keys_first, jinja2.Environment.getattr) if fragments else {}
    statuses: Counter[str] = Counter()
    for client in state["clients"]:
        statuses.update(client.statuses)
    medians: dict[str, Any] = {}
    if args.ab_lane:
        medians |= paired_medians(windows, "lane on", "lane off")
    if args.ab_getattr:
        medians |= paired_medians(windows, "dict keys first", "Jinja2's getattr") | renders
    if args.ab_binding:
        medians |= paired_medians(windows, "direct binding", "fastapi binding")
    if args.ab_remembered:
        medians |= paired_medians(windows, "remembered", "each time")
    return {
        "windows": windows,
        "median app CPU ms/move": statistics.median(w["app CPU ms/move"] for w in windows),
        **medians,
        "answers": dict(sorted(statuses.items())),
    }


class Forgetting:
    """For ``--ab-remembered``: the app's session signatures, state texts and pool gauges done
    as they were before each was remembered or sampled (:meth:`do`), and back (:meth:`undo`)."""

    def __init__(self, app: Any) -> None:
        import itsdangerous
        from sqlalchemy import event

        from app.engine import dumps, loads
        from app.metrics import POOL_IN_USE
        from app.services.state_texts import StateTexts
        from app.web.http.sessions import RememberingSigner

        services = app.state.services
        engines = [(services.engine, "main")]
        if not services.move_store.shared:
            engines.append((services.move_store.engine, "moves"))
        if services.move_store.inline is not None:
            engines.append((services.move_store.inline.engine.sync_engine, "moves_inline"))
        self.listeners: list[tuple[Any, str, Callable[..., None]]] = []
        for engine, name in engines:
            gauge = POOL_IN_USE.labels(name)
            self.listeners += [
                (engine, "checkout", lambda *_, gauge=gauge: gauge.inc()),
                (engine, "checkin", lambda *_, gauge=gauge: gauge.dec()),
            ]
        self.event = event
        self.kept = (RememberingSigner.verify_signature, StateTexts.loads, StateTexts.dumps)
        self.each_time = (
            itsdangerous.TimestampSigner.verify_signature,
            lambda _, text: loads(text),
            lambda _, state: dumps(state),
        )
        self.classes = (RememberingSigner, StateTexts)
        self.done = False

    def _set(self, ways: tuple[Any, ...]) -> None:
        signer, states = self.classes
        signer.verify_signature, states.loads, states.dumps = ways  # type: ignore[method-assign]

    def do(self) -> None:
        if not self.done:
            self._set(self.each_time)
            for engine, name, listener in self.listeners:
                self.event.listen(engine, name, listener)
            self.done = True

    def undo(self) -> None:
        if self.done:
            self._set(self.kept)
            for engine, name, listener in self.listeners:
                self.event.remove(engine, name, listener)
            self.done = False


def paired_medians(windows: list[dict[str, Any]], new: str, old: str) -> dict[str, Any]:
    """Each way's median CPU per move, the windows alternating (``new`` first), and in how many
    pairs of windows ``new`` cost less."""
    key = "app CPU ms/move"
    pairs = list(zip(windows[::2], windows[1::2], strict=True))
    less = sum(a[key] < b[key] for a, b in pairs)
    return {
        f"median {key}, {new}": statistics.median(a[key] for a, _ in pairs),
        f"median {key}, {old}": statistics.median(b[key] for _, b in pairs),
        f"windows where {new} cost less": f"{less} of {len(pairs)}",
    }


MOVE_FRAGMENT = "components/move_response.html"


def render_ab(fragments: list[dict[str, Any]], keys_first: Any, jinja2s: Any) -> dict[str, Any]:
    """The board move's fragment alone, rendered again from the contexts its moves had, the
    two ways of reading attributes in turn (15 rounds of 100 renders of every context each):
    a figure that holds still where whole moves swing by more than the change."""
    from app.web import i18n
    from app.web.pages.templating import FlatGlobals, templates

    template = templates.env.get_template(MOVE_FRAGMENT)
    times: dict[str, list[float]] = {"dict keys first": [], "Jinja2's getattr": []}
    with i18n.speaking("en"):
        for _ in range(15):
            for way, getattr_ in zip(times, (keys_first, jinja2s), strict=True):
                FlatGlobals.getattr = getattr_  # type: ignore[method-assign]
                began = time.process_time()
                for _ in range(100):
                    for context in fragments:
                        template.render(context)
                times[way].append(1e6 * (time.process_time() - began) / (100 * len(fragments)))
    FlatGlobals.getattr = keys_first  # type: ignore[method-assign]
    return {
        f"board move's fragment alone, median CPU us a render, {way}": round(
            statistics.median(ts), 1
        )
        for way, ts in times.items()
    } | {"fragment contexts rendered": len(fragments)}


def arguments() -> argparse.ArgumentParser:
    """This benchmark's options (``bench/instructions.py`` takes them too)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=3000, help="moves per measured window")
    parser.add_argument("--rounds", type=int, default=3, help="measured windows")
    parser.add_argument("--warmup", type=int, default=500, help="moves before measuring")
    parser.add_argument("--concurrency", type=int, default=8, help="players at once")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--path", choices=sorted(PLAYERS), default="api", help="who moves")
    parser.add_argument(
        "--ab-binding",
        action="store_true",
        help="windows in pairs: the move routes bound directly, then by FastAPI (app/web/direct.py)"
        " in turn, in one process",
    )
    parser.add_argument(
        "--ab-lane",
        action="store_true",
        help="alternate windows with the moves' lane (app/web/http/lane.py) and without",
    )
    parser.add_argument(
        "--ab-getattr",
        action="store_true",
        help="alternate windows with templates reading a dict's keys first (app/web/pages/"
        "templating.py, FlatGlobals.getattr) and with Jinja2's own getattr",
    )
    parser.add_argument(
        "--ab-remembered",
        action="store_true",
        help="alternate windows with the session signatures, state texts and pool gauges as"
        " built and as each was done before (every time, at each checkout)",
    )
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument("--log", type=Path, default=Path(os.devnull), help="the app's log lines")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    result = in_process(args, measure)
    print(json.dumps(result, indent=1))
    return 0 if set(result["answers"]) <= {"move 200", "player 201", "start 201", "start 303",
                                           "resign 200", "read 200"} else 1  # fmt: skip


def in_process(
    args: argparse.Namespace,
    measure: Callable[[argparse.Namespace], Coroutine[Any, Any, dict[str, Any]]],
) -> dict[str, Any]:
    """``measure(args)`` against the app in this process: on a fresh ``args.database_url``,
    with the benchmark's raised limits, the access log written to ``args.log`` (as in
    production), on uvloop as uvicorn runs it. Its result, after the machine's facts."""
    fresh_database(args.database_url)
    metrics = None
    if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:  # read by prometheus-client on import
        assert "prometheus_client" not in sys.modules
        metrics = tempfile.TemporaryDirectory(prefix="ph-bench-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics.name
    os.environ.update(BENCH_LIMITS)
    os.environ.update(
        {"DATABASE_URL": args.database_url, "APP_ENV": "development", "JSON_LOGS": "true"}
    )
    sys.stderr = args.log.open("a")
    try:
        try:
            import uvloop
        except ImportError:
            run: Callable[[Coroutine[Any, Any, dict[str, Any]]], dict[str, Any]] = asyncio.run
        else:
            run = uvloop.run
        result = run(measure(args))
    finally:
        sys.stderr.close()
        sys.stderr = sys.__stderr__
        if metrics is not None:
            metrics.cleanup()
    facts = machine_facts(args.database_url)
    return {"machine": facts, "load average": os.getloadavg(), **result}


if __name__ == "__main__":
    sys.exit(main())
