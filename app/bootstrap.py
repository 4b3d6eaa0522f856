"""The one place that builds the services: the web app, the operator commands, the job worker
and the tests all get theirs from here, wired the same way.

Collaborators are passed to constructors. The one cycle — a game that ends tells the solver
(to judge its deal) and an event (to update its standings), both of which start games — is
closed here, one line for each listener.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, refusals
from app.db.broker import InProcessBroker, make_broker
from app.db.deployment import KeyCheck, check_deal_key
from app.db.faults import summary
from app.db.move_store import MoveStore
from app.db.session import Limits, make_engine, make_sessionmaker
from app.services.accounts import Accounts
from app.services.arenas import Arenas
from app.services.availability import Health
from app.services.challenge import Challenges
from app.services.deals import Deals
from app.services.games import Games
from app.services.history import History
from app.services.leaderboard import Leaderboards
from app.services.players import Players
from app.services.progress import Progress
from app.services.race_queue import RaceQueue
from app.services.rooms.feed import RoomFeed
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import Limits as RoomLimits
from app.services.seal import Sealer
from app.services.solver import Solver
from app.services.solver_pool import SolverPool

log = logging.getLogger(__name__)


class SolverQueue(Protocol):
    """Where the solver sends its durable work when its workers are a service of their own
    (app/jobs: ``Queue``)."""

    def judge_later(self, game: str, deal: int) -> None: ...

    def analyse_later(self, game_id: str, game: str, deal: int, moves: list[str]) -> None: ...


@dataclass
class Services:
    """Every service of one process, over one database."""

    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    move_store: MoveStore
    sealer: Sealer  # the seal of deals, and the date and time it goes by
    broker: InProcessBroker
    games: Games
    players: Players
    accounts: Accounts
    solver: Solver
    rooms: Rooms
    feed: RoomFeed
    deals: Deals
    progress: Progress
    leaderboards: Leaderboards
    history: History
    health: Health
    challenges: Challenges
    race_queue: RaceQueue
    arenas: Arenas

    def close(self) -> None:
        """Frees what the services hold (worker processes, connections)."""
        self.solver.pool.close()
        self.broker.close()
        self.move_store.close()
        self.engine.dispose()


def database_limits(settings: Settings) -> Limits:
    return Limits(
        pool_timeout_ms=settings.db_pool_timeout_ms,
        statement_timeout_ms=settings.db_statement_timeout_ms,
        lock_timeout_ms=settings.db_lock_timeout_ms,
        move_lock_timeout_ms=settings.db_move_lock_timeout_ms,
    )


def build(
    settings: Settings,
    *,
    engine: Engine | None = None,
    answer_json: Any = None,
    solver_workers: int | None = None,
    queue: SolverQueue | None = None,
) -> Services:
    """Every service over ``settings.database_url`` (or ``engine``, already made).

    ``answer_json`` writes a game's API answer (the web's schema), stored with an
    idempotency key; operator commands and workers, which answer no request, leave it unset.
    """
    if engine is None:
        engine = make_engine(
            settings.database_url, settings.db_pool_size, database_limits(settings)
        )
    sessions = make_sessionmaker(engine)
    key = settings.deal_key_bytes
    move_store = MoveStore.open(engine, threads=settings.threadpool_size)
    broker = make_broker(engine)
    sealer = Sealer(key)
    game_options: dict[str, Any] = {}
    if answer_json is not None:
        game_options["answer_json"] = answer_json
    games = Games(
        sessions,
        key,
        max_moves=settings.max_moves_per_game,
        idle_cap_ms=int(settings.idle_cap_seconds * 1000),
        store=move_store,
        publish=broker.publish,
        sealer=sealer,
        **game_options,
    )
    solver = Solver(
        sessions,
        key,
        games,
        SolverPool(
            settings.solver_workers if solver_workers is None else solver_workers,
            idle=settings.solver_idle_priority,
        ),
        settings.hint_seconds,
        settings.solver_judge_seconds,
        judge_nodes=settings.solver_judge_nodes,
        hint_nodes=settings.solver_hint_nodes,
        analysis_nodes=settings.solver_analysis_nodes,
        time_limits=settings.solver_time_limits,
        judge_busy_share=settings.solver_judge_busy_share,
        judge_later=None if queue is None else queue.judge_later,
        analyse_later=None if queue is None else queue.analyse_later,
    )
    games.ended = solver.game_ended  # the one cycle: see the module's docstring
    rooms = Rooms(
        sessions,
        games,
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
    deals = Deals(sessions, key, sealer)
    arenas = Arenas(sessions, games, key, publish=broker.publish)
    games.competition_ended = arenas.game_ended  # an event's live standings: the same cycle
    players = Players(sessions, store=move_store)
    # Revocations and preference changes of other processes, as they commit (PostgreSQL).
    broker.watch_players(players.changed, players.feed)
    return Services(
        settings=settings,
        engine=engine,
        sessions=sessions,
        move_store=move_store,
        sealer=sealer,
        broker=broker,
        games=games,
        players=players,
        accounts=Accounts(sessions, sealer),
        solver=solver,
        rooms=rooms,
        feed=RoomFeed(rooms, broker),
        deals=deals,
        progress=Progress(sessions),
        leaderboards=Leaderboards(
            sessions,
            settings.leaderboard_min_games,
            cache_seconds=settings.leaderboard_cache_seconds,
            sealer=sealer,
        ),
        history=History(sessions, sealer),
        health=Health(sessions),
        challenges=Challenges(sessions, games, key),
        race_queue=RaceQueue(sessions, rooms, settings.race_queue_wait_s),
        arenas=arenas,
    )


def for_serving(
    settings: Settings, *, answer_json: Any, queue: SolverQueue | None = None
) -> Services:
    """The web app's services, once the settings and the database's deal key allow serving
    (:class:`StartRefused` says why not)."""
    problems = refusals(settings)
    if problems:
        raise StartRefused(" ".join(problems))
    engine = make_engine(settings.database_url, settings.db_pool_size, database_limits(settings))
    problem = deal_key_problem(engine, settings)
    if problem:
        engine.dispose()
        raise StartRefused(problem)
    return build(settings, engine=engine, answer_json=answer_json, queue=queue)


@contextmanager
def opened(settings: Settings) -> Iterator[Services]:
    """The services of an operator command or a job worker: one connection, one solver
    process, no idempotent answers to write; closed on the way out."""
    engine = make_engine(settings.database_url, pool_size=1)
    services = build(settings, engine=engine, solver_workers=1)
    try:
        yield services
    finally:
        services.close()


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
