"""The application factory: ``uvicorn --factory app.main:create_app`` or ``app.main:app``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import fastapi_offline
from anyio import to_thread
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from sqlalchemy import Engine
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from app.config import PROJECT_DIR, Settings, get_settings, refusals
from app.db.broker import make_broker
from app.db.deployment import KeyCheck, check_deal_key
from app.db.faults import is_unavailable, summary
from app.db.game_rows import MoveStore
from app.db.session import Limits, make_engine, make_sessionmaker
from app.metrics import process_exited
from app.services.accounts import Accounts
from app.services.deals import Deals
from app.services.games import Games
from app.services.leaderboard import Leaderboards
from app.services.players import Players
from app.services.progress import Progress
from app.services.rooms import Limits as RoomLimits
from app.services.rooms import Rooms
from app.services.solver import Solver, SolverPool
from app.web import docs, errors, faults, observe, schemas
from app.web.csrf import CSRFMiddleware
from app.web.headers import HeadAsGet, SecurityHeaders
from app.web.https import NeedsHttps
from app.web.limits import Admission, SizeLimits
from app.web.ratelimit import RateLimits
from app.web.router import router
from app.web.signin_guard import SignInGuard
from app.web.templating import templates

log = logging.getLogger(__name__)
SESSION_COOKIE = "ph_session"
SESSION_MAX_AGE = 400 * 24 * 3600  # browsers cap cookie lifetimes near 400 days


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
        except Exception as exc:
            if not is_unavailable(exc):
                log.exception("sweeping rooms failed")
            else:  # the database is away: one line, and the next round tries again
                log.warning("sweeping rooms failed, database unavailable: %s", summary(exc))


class StartRefused(RuntimeError):
    """The settings or the database say this process must not serve (production only)."""


def deal_key_problem(engine: Engine, settings: Settings) -> str | None:
    """Why the deal key must not be used on this database (None: it may). In production a key
    that differs from the one the database was first started with, or a database where this
    cannot be checked, is refused; elsewhere a warning is logged and the app starts."""
    production = settings.app_env == "production"
    try:
        found = check_deal_key(engine, settings.deal_key_bytes)
    except Exception as exc:
        problem = (
            "Refusing to start in production: the DEAL_KEY cannot be checked against the "
            f"database ({summary(exc)}). Is the database up and migrated (alembic upgrade head)?"
        )
        if production:
            return problem
        log.warning("DEAL_KEY not checked against the database: %s", summary(exc))
        return None
    if found is KeyCheck.RECORDED:
        log.info("DEAL_KEY fingerprint recorded: this database's games are dealt with this key")
    if found is not KeyCheck.DIFFERS:
        return None
    problem = (
        "Refusing to start: DEAL_KEY is not the key this database was created with, so every "
        "stored game and shared deal link would change its cards. Start with the DEAL_KEY kept "
        "with this database's backup (docs/operating.md, Backup and restore)."
    )
    if production:
        return problem
    log.warning("%s (allowed outside production)", problem)
    return None


def preflight(settings: Settings) -> list[str]:
    """Every reason this process must not start, settings and database together (empty: go)."""
    problems = refusals(settings)
    if problems:
        return problems
    engine = make_engine(settings.database_url, pool_size=1)
    try:
        problem = deal_key_problem(engine, settings)
    finally:
        engine.dispose()
    return [problem] if problem else []


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    problems = refusals(settings)
    if problems:
        raise StartRefused(" ".join(problems))
    limits = Limits(
        pool_timeout_ms=settings.db_pool_timeout_ms,
        statement_timeout_ms=settings.db_statement_timeout_ms,
        lock_timeout_ms=settings.db_lock_timeout_ms,
        move_lock_timeout_ms=settings.db_move_lock_timeout_ms,
    )
    engine = make_engine(settings.database_url, settings.db_pool_size, limits)
    problem = deal_key_problem(engine, settings)
    if problem:
        engine.dispose()
        raise StartRefused(problem)
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
        if jobs_app is not None:
            await to_thread.run_sync(jobs_app.open)
        sweeper = asyncio.create_task(_sweep_rooms(app.state.rooms, settings.room_sweep_s))
        app.state.solver.loop = asyncio.get_running_loop()  # deals judged when games end
        yield
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await broker.stop()
        if jobs_app is not None:
            await to_thread.run_sync(jobs_app.close)
        app.state.solver.loop = None
        engine.dispose()
        move_store.close()
        app.state.solver.pool.close()
        process_exited(os.getpid())

    app = FastAPI(
        lifespan=lifespan,
        title="Patience Hall",
        description="Five patience games, shareable deals and fair leaderboards.",
        version="1",
        # Swagger UI and ReDoc are served from vendored assets, with no inline script
        # (app/web/docs.py): the CDN pages FastAPI builds would break the CSP.
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json" if settings.public_api_docs else None,
    )
    app.state.settings = settings
    # Templates are read once, except while developing: checking each template file's time on
    # every render is a system call per fragment on the move path.
    templates.env.auto_reload = settings.app_env == "development"
    app.state.engine = engine
    app.state.sessions = sessions
    # The move path's own connections (PostgreSQL), passed to the one service that uses them.
    move_store = MoveStore.open(engine)
    app.state.move_store = move_store
    app.state.games = Games(
        sessions,
        settings.deal_key_bytes,
        max_moves=settings.max_moves_per_game,
        idle_cap_ms=int(settings.idle_cap_seconds * 1000),
        store=move_store,
        answer_json=schemas.answer_text,
    )
    app.state.players = Players(sessions)
    app.state.accounts = Accounts(sessions)
    app.state.solver = Solver(
        sessions,
        settings.deal_key_bytes,
        app.state.games,
        SolverPool(settings.solver_workers),
        settings.hint_seconds,
        settings.solver_judge_seconds,
        judge_busy_share=settings.solver_judge_busy_share,
    )
    app.state.games.ended = app.state.solver.game_ended
    jobs_app = None
    if settings.solver_jobs and engine.dialect.name == "postgresql":
        from app.jobs import defer_analyse, defer_judge, make_jobs

        jobs_app = make_jobs(settings.database_url)
        app.state.solver.judge_later = functools.partial(defer_judge, jobs_app)
        app.state.solver.analyse_later = functools.partial(defer_analyse, jobs_app)
    # Events of rooms and races: published after each commit, streamed by app/web/live.py.
    broker = make_broker(engine)
    app.state.broker = broker
    app.state.games.publish = broker.publish
    app.state.rooms = Rooms(
        sessions,
        app.state.games,
        RoomLimits(
            countdown_s=settings.race_countdown_s,
            max_members=settings.room_max_members,
            rooms_per_player=settings.rooms_per_player,
            idle_s=settings.room_idle_s,
            forfeit_s=settings.race_forfeit_s,
            event_retention_s=settings.event_retention_s,
        ),
        publish=broker.publish,
    )
    app.state.deals = Deals(sessions, settings.deal_key_bytes)
    app.state.progress = Progress(sessions)
    app.state.limits = RateLimits(settings)
    app.state.signin_guard = SignInGuard(settings, app.state.limits)
    app.state.leaderboards = Leaderboards(
        sessions,
        settings.leaderboard_min_games,
        cache_seconds=settings.leaderboard_cache_seconds,
    )

    errors.install(app)
    faults.install(app)
    observe.configure_logging(settings.json_logs)
    observe.count_pool(engine, "main")
    if not move_store.shared:
        observe.count_pool(move_store.engine, "moves")
    app.include_router(router)
    if settings.public_api_docs:  # not in production unless API_DOCS=true
        app.include_router(docs.router)
    app.include_router(observe.router)
    if settings.public_api_docs:
        app.mount(  # before /static, which would answer 404 for these
            docs.ASSETS,
            StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static"),
            name="docs-assets",
        )
    app.mount("/static", StaticFiles(directory=PROJECT_DIR / "static"), name="static")

    # Outermost last: security headers on everything (refusals too), HEAD as GET, gzip, then
    # for browser routes the session and, inside it, the CSRF check that reads the session.
    app.add_middleware(
        BrowserOnly,
        middleware=CSRFMiddleware,
    )
    app.add_middleware(
        BrowserOnly,
        middleware=SessionMiddleware,
        secret_key=settings.session_secret,
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_MAX_AGE,
        same_site="lax",
        https_only=settings.secure_cookies,
    )
    app.add_middleware(GZipMiddleware, minimum_size=512)
    app.add_middleware(HeadAsGet)
    app.add_middleware(
        Admission,
        threads=settings.threadpool_size,
        expensive=settings.expensive_concurrency,
        expensive_share=settings.expensive_share,
        queue_timeout_ms=settings.queue_timeout_ms,
        retry_after=settings.retry_after_seconds,
    )
    # Nothing parses a request (cookies, forms, JSON) before its size is checked.
    app.add_middleware(
        SizeLimits, max_body=settings.max_body_bytes, max_header=settings.max_header_bytes
    )
    app.add_middleware(NeedsHttps, secure=settings.secure_cookies)
    app.add_middleware(SecurityHeaders, secure=settings.secure_cookies)  # refusals too
    app.add_middleware(observe.AccessLog)  # outermost: every answer is logged and counted
    return app


def __getattr__(name: str) -> Any:
    # ``app.main:app`` builds the app on first use, so importing this module has no side effects.
    if name == "app":
        return create_app()
    raise AttributeError(name)
