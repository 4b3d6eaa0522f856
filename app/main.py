"""The application factory: ``uvicorn --factory app.main:create_app`` or ``app.main:app``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import fastapi_offline
from anyio import to_thread
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from app.bootstrap import for_serving
from app.config import PROJECT_DIR, Settings, get_settings
from app.jobs import queue_of
from app.metrics import process_exited
from app.services.availability import is_unavailable, summary
from app.web.api import docs
from app.web.api.schemas.game_state import answer_text
from app.web.http import errors, faults, observe
from app.web.http.compress import Gzip
from app.web.http.csrf import CSRFMiddleware
from app.web.http.headers import HeadAsGet, SecurityHeaders
from app.web.http.https import NeedsHttps
from app.web.http.lane import MoveLane
from app.web.http.limits import Admission, SizeLimits
from app.web.http.ratelimit import RateLimits
from app.web.http.sessions import Sessions
from app.web.http.signin_guard import SignInGuard
from app.web.i18n import LanguageMiddleware
from app.web.pages.rooms import LiveFragments
from app.web.pages.templating import templates
from app.web.router import ROUTERS, add_routes

log = logging.getLogger(__name__)
SESSION_COOKIE = "ph_session"
SESSION_MAX_AGE = 400 * 24 * 3600  # browsers cap cookie lifetimes near 400 days
GZIP_MINIMUM = 512  # bytes: a smaller answer goes uncompressed


class BrowserOnly:
    """Runs a cookie middleware (session, CSRF) for browser routes only: the API ignores
    cookies by contract, so its requests skip the work on the hottest path."""

    def __init__(self, app: ASGIApp, /, middleware: Any, **options: Any) -> None:
        self.plain = app
        self.wrapped = middleware(app, **options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/"):
            await self.plain(scope, receive, send)
        else:
            await self.wrapped(scope, receive, send)


async def every(
    every_s: float,
    work: Callable[[], object],
    what: str,
    pause: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Runs ``work`` (blocking: in a thread) every ``every_s`` seconds until cancelled; a
    failed round is logged and the next one tries again. Tests pass their own ``pause``."""
    while True:
        await pause(every_s)
        try:
            await to_thread.run_sync(work)
        except Exception as exc:
            if not is_unavailable(exc):
                log.exception("%s failed", what)
            else:  # the database is away: one line, and the next round tries again
                log.warning("%s failed, database unavailable: %s", what, summary(exc))


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    queue = queue_of(settings)
    services = for_serving(settings, answer_json=answer_text, queue=queue)

    # Whether a lifespan of this app has started its services and not yet stopped them. (A
    # flag, not a count of lifespans: when the first one ends before one opened inside it, as
    # a test may close its clients in the order it opened them, a count went below zero and
    # no later lifespan started anything: no broker, and no moves on the event loop.)
    running = [False]

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if running[0]:
            # A second lifespan while the first runs (tests open a client inside another's):
            # it shares what the first started. Starting again would move the broker's tasks
            # to this loop and leave the first loop's LISTEN connection open for ever, and its
            # end would close the services the first still serves with.
            yield
            return
        running[0] = True
        try:
            # Blocking work (database calls) runs in this many threads per process. Far fewer
            # threads than FastAPI's 40 keep them from fighting over the GIL, which under load
            # doubled the CPU of a move; requests beyond them wait their turn in the event loop.
            # Measured in bench/RESULTS.md (HTTP load).
            to_thread.current_default_thread_limiter().total_tokens = settings.threadpool_size
            # What exists now (modules, compiled statements, templates) lives as long as the
            # process: frozen, the collector stops walking it (p99 at 500 moves/s: 109–125 ms
            # → 59–94 ms, bench/RESULTS.md). Young objects are collected every 5,000 new ones
            # (Python's default is 700): each such pause is short (a few ms; at 50,000 they
            # took 37–58 ms of CPU beside 1,000 event streams and set the moves' p99), and
            # the older generations are walked rarely.
            gc.collect()
            gc.freeze()
            gc.set_threshold(5_000, 50, 1000)
            await services.broker.start()
            # Moves and their rate limits wait for the database and Redis on this loop, not in
            # a thread (issue 26): their connections are this loop's, closed as it ends.
            if services.move_store.inline is not None:
                services.move_store.inline.start()
            limits.start()
            if queue is not None:
                await to_thread.run_sync(queue.app.open)
            # Forfeits silent racers and closes idle rooms (app/services/rooms/rooms.py), and forms
            # rated races from the queue even when no queued player polls (race_queue.py).
            background = [
                asyncio.create_task(
                    every(settings.room_sweep_s, services.rooms.sweep, "sweeping rooms")
                ),
                asyncio.create_task(
                    every(settings.race_queue_form_s, services.race_queue.form_due, "forming races")
                ),
                asyncio.create_task(gauges.keep_sampling()),
            ]
            services.solver.loop = asyncio.get_running_loop()  # deals judged when games end
            yield
            for task in background:
                task.cancel()
            for task in background:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await services.broker.stop()
            await limits.stop()
            if services.move_store.inline is not None:
                await services.move_store.inline.stop()
            if queue is not None:
                await to_thread.run_sync(queue.app.close)
            services.solver.loop = None
            services.close()
            process_exited(os.getpid())
        finally:
            running[0] = False

    app = FastAPI(
        lifespan=lifespan,
        title="Patience Hall",
        description="Five patience games, shareable deals and fair leaderboards.",
        version="1",
        # Swagger UI and ReDoc are served from vendored assets, with no inline script
        # (app/web/api/docs.py): the CDN pages FastAPI builds would break the CSP.
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json" if settings.public_api_docs else None,
        # FastAPI's own OpenTelemetry is off: the image ships no OpenTelemetry SDK to send it
        # anywhere, the app's /metrics and JSON log lines say what it would, and on every request
        # it looked for configured providers (bench/RESULTS.md, issue 26).
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    # Templates are read once, except while developing: checking each template file's time on
    # every render is a system call per fragment on the move path.
    templates.env.auto_reload = settings.app_env == "development"
    app.state.settings = settings
    app.state.services = services
    limits = RateLimits(settings)
    app.state.limits = limits
    app.state.signin_guard = SignInGuard(settings, limits)
    app.state.live_fragments = LiveFragments(services.rooms)

    errors.install(app)
    faults.install(app)
    observe.configure_logging(settings.json_logs)
    gauges = observe.PoolGauges().add(services.engine, "main")
    if not services.move_store.shared:
        gauges = gauges.add(services.move_store.engine, "moves")
    if services.move_store.inline is not None:
        gauges = gauges.add(services.move_store.inline.engine.sync_engine, "moves_inline")
    app.state.pool_gauges = gauges
    add_routes(app, ROUTERS)
    if settings.public_api_docs:  # not in production unless API_DOCS=true
        add_routes(app, (docs.router,))
    add_routes(app, (observe.router,))
    if settings.public_api_docs:
        app.mount(  # before /static, which would answer 404 for these
            docs.ASSETS,
            StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static"),
            name="docs-assets",
        )
    app.mount("/static", StaticFiles(directory=PROJECT_DIR / "static"), name="static")

    # Outermost last: security headers on everything (refusals too), HEAD as GET, gzip, then
    # for browser routes the session and, inside it, the CSRF check that reads the session.
    session_options: dict[str, Any] = {
        "secret_key": settings.session_secret,
        "session_cookie": SESSION_COOKIE,
        "max_age": SESSION_MAX_AGE,
        "same_site": "lax",
        "https_only": settings.secure_cookies,
    }
    app.add_middleware(BrowserOnly, middleware=CSRFMiddleware)
    app.add_middleware(BrowserOnly, middleware=Sessions, **session_options)
    app.add_middleware(Gzip, minimum_size=GZIP_MINIMUM)
    app.add_middleware(HeadAsGet)
    # One admission, its gates and counts shared by the stack and the move lane.
    admission = Admission(
        threads=settings.threadpool_size,
        expensive=settings.expensive_concurrency,
        expensive_share=settings.expensive_share,
        queue_timeout_ms=settings.queue_timeout_ms,
        retry_after=settings.retry_after_seconds,
        hints=settings.hint_concurrency,
        analyses=settings.analysis_concurrency,
        stream_opens=settings.stream_open_concurrency,
        metered_queue=settings.metered_queue,
        client_concurrency=settings.client_concurrency,
        client_streams=settings.client_streams,
        enforce_retry_after=settings.enforce_retry_after,
    )
    app.add_middleware(admission.around)
    # Nothing parses a request (cookies, forms, JSON) before its size is checked.
    app.add_middleware(
        SizeLimits, max_body=settings.max_body_bytes, max_header=settings.max_header_bytes
    )
    # The request's language, for everything inside that words an answer (app/web/i18n.py).
    app.add_middleware(LanguageMiddleware)
    app.add_middleware(NeedsHttps, secure=settings.secure_cookies)
    app.add_middleware(SecurityHeaders, secure=settings.secure_cookies)  # refusals too
    app.add_middleware(observe.AccessLog)  # every answer is logged and counted
    # Outermost: a move served in one layer that does what the layers above do for it.
    app.add_middleware(
        MoveLane,
        routes=app,
        paths=("/api/games/{game_id}/moves", "/games/{game_id}/moves"),
        browser_layers=((Sessions, session_options), (CSRFMiddleware, {})),
        admission=admission,
        secure=settings.secure_cookies,
        max_body=settings.max_body_bytes,
        max_header=settings.max_header_bytes,
        minimum_size=GZIP_MINIMUM,
    )
    return app


def __getattr__(name: str) -> Any:
    # ``app.main:app`` builds the app on first use, so importing this module has no side effects.
    if name == "app":
        return create_app()
    raise AttributeError(name)
