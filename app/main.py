"""The application factory: ``uvicorn --factory app.main:create_app`` or ``app.main:app``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from anyio import to_thread
from asgi_csrf import asgi_csrf
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from app.config import PROJECT_DIR, Settings, get_settings
from app.db.broker import make_broker
from app.db.session import make_engine, make_sessionmaker
from app.services.deals import Deals
from app.services.games import Games
from app.services.leaderboard import Leaderboards
from app.services.players import Players
from app.services.rooms import Limits, Rooms
from app.web import errors
from app.web.router import router

log = logging.getLogger(__name__)
SESSION_COOKIE = "ph_session"
SESSION_MAX_AGE = 400 * 24 * 3600  # browsers cap cookie lifetimes near 400 days


def _skip_csrf(scope: dict[str, Any]) -> bool:
    # The API authenticates with bearer tokens and ignores cookies entirely, so a forged
    # cross-site request carries no credentials there.
    return str(scope.get("path", "")).startswith("/api/")


async def _csrf_failed(scope: Scope, send: Send, message_id: Any) -> None:
    body = (
        b"<!doctype html><title>Form expired</title><p>This form has expired or came from "
        b"another site. <a href='/'>Reload Patience Hall</a> and try again.</p>"
    )
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"text/html; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class CSRFMiddleware:
    """asgi-csrf's double-submit cookie check, in Starlette's middleware shape.

    asgi-csrf reads form bodies itself and can trip over a malformed one (a multipart type
    without a boundary, a body that is not UTF-8) before our app ever runs; such a request gets
    a 400 instead of a server error. Errors raised once the app is running pass through.
    """

    def __init__(self, app: ASGIApp, secret: str, secure: bool) -> None:
        self.inner = app
        self.app = asgi_csrf(
            self._enter,
            signing_secret=secret,
            skip_if_scope=_skip_csrf,
            cookie_secure=secure,
            send_csrf_failed=_csrf_failed,
        )

    async def _enter(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["state"]["csrf_passed"] = True
        await self.inner(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        scope.setdefault("state", {})
        try:
            await self.app(scope, receive, send)
        except (IndexError, UnicodeDecodeError, ValueError, AssertionError):
            if scope["state"].get("csrf_passed"):
                raise
            await _send_plain(send, 400, b"The form data could not be read.")


async def _send_plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


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


async def _sweep_rooms(rooms: Rooms, every_s: float) -> None:
    """Forfeits silent racers and closes idle rooms, now and then (app/services/rooms.py)."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await to_thread.run_sync(rooms.sweep)
        except Exception:  # the database is away: the next round tries again
            log.exception("sweeping rooms failed")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    engine = make_engine(settings.database_url, settings.db_pool_size)
    sessions = make_sessionmaker(engine)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Blocking work (database calls) runs in this many threads per process. Far fewer
        # threads than FastAPI's 40 keep them from fighting over the GIL, which under load
        # doubled the CPU of a move; requests beyond them wait their turn in the event loop.
        # Measured in bench/RESULTS.md (HTTP load).
        to_thread.current_default_thread_limiter().total_tokens = settings.threadpool_size
        # What exists now (modules, compiled statements, templates) lives as long as the
        # process: frozen, the collector stops walking it; and collecting young objects less
        # often makes fewer pauses land in the slowest moves (p99 at 500 moves/s: 109–125 ms
        # → 59–94 ms, bench/RESULTS.md).
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 50, 1000)
        await broker.start()
        sweeper = asyncio.create_task(_sweep_rooms(app.state.rooms, settings.room_sweep_s))
        yield
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await broker.stop()
        engine.dispose()
        app.state.games.close()

    app = FastAPI(
        lifespan=lifespan,
        title="Patience Hall",
        description="Five patience games, shareable deals and fair leaderboards.",
        version="1",
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessions = sessions
    app.state.games = Games(sessions, settings.deal_key_bytes)
    app.state.players = Players(sessions)
    # Events of rooms and races: published after each commit, streamed by app/web/live.py.
    broker = make_broker(engine)
    app.state.broker = broker
    app.state.games.publish = broker.publish
    app.state.rooms = Rooms(
        sessions,
        app.state.games,
        Limits(
            countdown_s=settings.race_countdown_s,
            max_members=settings.room_max_members,
            rooms_per_player=settings.rooms_per_player,
            idle_s=settings.room_idle_s,
            forfeit_s=settings.race_forfeit_s,
        ),
        publish=broker.publish,
    )
    app.state.deals = Deals(sessions, settings.deal_key_bytes)
    app.state.leaderboards = Leaderboards(
        sessions,
        settings.leaderboard_min_games,
        cache_seconds=settings.leaderboard_cache_seconds,
    )

    errors.install(app)
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=PROJECT_DIR / "static"), name="static")

    app.add_middleware(GZipMiddleware, minimum_size=512)
    app.add_middleware(
        BrowserOnly,
        middleware=SessionMiddleware,
        secret_key=settings.session_secret,
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_MAX_AGE,
        same_site="lax",
        https_only=settings.cookie_secure,
    )
    app.add_middleware(
        BrowserOnly,
        middleware=CSRFMiddleware,
        secret=settings.session_secret + ":csrf",
        secure=settings.cookie_secure,
    )
    return app


def __getattr__(name: str) -> Any:
    # ``app.main:app`` builds the app on first use, so importing this module has no side effects.
    if name == "app":
        return create_app()
    raise AttributeError(name)
