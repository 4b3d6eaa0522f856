"""The solver's durable jobs, on PostgreSQL through procrastinate: a worker on any machine takes
them, and a job whose worker crashed is taken again (its heartbeat stops; ``retry_stalled``
puts it back in the queue), so none is lost.

- ``judge`` — a deal whose game ended: the solver's verdict (``deal_winnable``), as the app's own
  worker pool did it (app/services/solver.py), now deferred by the app when ``SOLVER_JOBS`` is on.
- ``fill_pool`` — certify deals until the game's certified-winnable pool holds
  ``CERTIFIED_POOL_TARGET``, a few at a time (each verdict stored at once), deferring itself
  again until it does. ``python -m app.cli migrate`` defers one per game, so a new install fills
  its pools in the background on first start, and ``ensure_pools`` looks again every hour.
- ``analyse`` — a finished game's analysis (where it slipped, contract v3), asked for by a
  player: the app defers it (after the viewer passed the solution's gate) and waits for the
  stored answer a while (``Solver.analyse_later``); stored with the game when decided.
- ``retry_stalled`` — every minute: jobs of workers that stopped sending heartbeats go back.

Run a worker: ``python -m app.jobs`` (app/jobs/__main__.py; docker-compose.yml's ``worker``
service; scale it with ``--scale worker=N``). A package with a ``__main__``, so that the job app
is defined in ``app.jobs`` and never in ``__main__`` (procrastinate warns about that, in a line
that is not JSON). The queue's tables are created by
``python -m app.cli migrate`` (``apply_schema``).
"""

from __future__ import annotations

import logging
import logging.config
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Any

import procrastinate
import psycopg
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import JobDeferrer
from procrastinate.tasks import configure_task
from procrastinate.types import JSONValue
from sqlalchemy.engine import make_url

from app.bootstrap import opened
from app.config import Settings, get_settings
from app.engine import GAMES
from app.services.solver import Solver
from app.services.solver_jobs import Verdict, judge_deal

log = logging.getLogger(__name__)
QUEUE = "solver"
POOL_BATCH = 3  # deals certified per fill_pool job (each within CERTIFY_SECONDS)
FILL_JOB_SECONDS = 60.0  # a fill_pool job judges deals this long at most, then stops
STALLED_SECONDS = 30.0  # no heartbeat for this long (workers beat every 10 s): a lost worker
# procrastinate's tables are created under the migrations' advisory lock (another key).
_SCHEMA_LOCK = 0x50482D4A4F4253


def conninfo(database_url: str) -> str:
    """A libpq connection string from the app's SQLAlchemy URL."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def _connector(database_url: str | None) -> procrastinate.PsycopgConnector:
    """Over a database (by default the settings' DATABASE_URL, read when first connecting, so
    that importing this module reads nothing)."""
    kwargs: dict[str, Any] = {"min_size": 1, "max_size": 2}
    if database_url is not None:
        kwargs["conninfo"] = conninfo(database_url)
    else:
        kwargs["conninfo"] = lambda: conninfo(get_settings().database_url)
    return procrastinate.PsycopgConnector(**kwargs)


jobs = procrastinate.App(connector=_connector(None))


def make_jobs(database_url: str) -> procrastinate.App:
    """The job app (its tasks) over the given database: for the app and operator commands."""
    return jobs.with_connector(_connector(database_url))


@contextmanager
def _solver() -> Iterator[Solver]:
    with opened(get_settings()) as services:
        yield services.solver


@jobs.task(name="judge", queue=QUEUE, retry=3)
def judge(game: str, deal: int) -> str:
    """Judges a deal whose game ended (unless it has a verdict) and stores what was found."""
    settings = get_settings()
    with _solver() as solver:
        if not solver.needs_verdict(game, deal):
            return "known"
        seconds = (settings.solver_judge_seconds or 3.0) if settings.solver_time_limits else None
        verdict = judge_deal(game, deal, solver.deal_key, settings.solver_judge_nodes, seconds)
        solver.store_judged(verdict)
        return verdict.outcome.value


@jobs.task(name="analyse", queue=QUEUE, retry=3)
def analyse(game_id: str, game: str, deal: int, moves: list[str]) -> bool:
    """The analysis of a finished game, stored with it when decided (returns whether)."""
    with _solver() as solver:
        return solver.analyse_now(game_id, game, deal, moves)


def defer_analyse(
    app: procrastinate.App, game_id: str, game: str, deal: int, moves: list[str]
) -> None:
    """``Solver.analyse_later``: queued once per game while it waits for a worker."""
    with suppress(AlreadyEnqueued):
        deferrer(app, "analyse", f"analyse:{game_id}").defer(
            game_id=game_id, game=game, deal=deal, moves=list[JSONValue](moves)
        )


class _TimeUp(Exception):
    pass


@jobs.task(name="fill_pool", queue=QUEUE, retry=3)
def fill_pool(game: str) -> int:
    """Certifies a few more deals of ``game`` (for FILL_JOB_SECONDS at most); defers itself
    again while the pool is short and this round found a winnable deal. A game whose deals the
    solver cannot decide within its budget (Quadruple Interchange, mostly) is not searched
    without end: ``ensure_pools`` tries it again an hour later."""
    target = get_settings().certified_pool_target
    deadline = time.monotonic() + FILL_JOB_SECONDS

    def progress(have: int, want: int, verdict: Verdict | None) -> None:
        if time.monotonic() > deadline and have < want:
            raise _TimeUp

    with _solver() as solver:
        before = have = solver.pool_size(game)
        if have < target:
            with suppress(_TimeUp):
                solver.certify(game, min(target, have + POOL_BATCH), progress=progress)
            have = solver.pool_size(game)
    if before < have < target:
        defer_fill(game)
    log.info("certified pool of %s: %d of %d deals", game, have, target)
    return have


def deferrer(app: procrastinate.App, task: str, lock: str | None = None) -> JobDeferrer:
    """A deferrer of a task by name through ``app``'s own connection (an app made by
    ``make_jobs`` shares the tasks, and the tasks would defer through ``jobs``)."""
    return configure_task(name=task, job_manager=app.job_manager, queue=QUEUE, queueing_lock=lock)


def defer_fill(game: str, app: procrastinate.App | None = None) -> bool:
    """Queues the filling of one game's pool, unless it is queued already."""
    try:
        deferrer(app or jobs, "fill_pool", f"fill_pool:{game}").defer(game=game)
    except AlreadyEnqueued:
        return False
    return True


@dataclass(frozen=True)
class Queue:
    """The durable queue as the app's services use it: the app opens and closes it, the solver
    hands it the deals to judge and the games to analyse (app/bootstrap.py)."""

    app: procrastinate.App
    judge_later: Callable[[str, int], None]
    analyse_later: Callable[[str, str, int, list[str]], None]


def queue_of(settings: Settings) -> Queue | None:
    """The queue the app hands its solver work to: with SOLVER_JOBS on PostgreSQL (the queue's
    tables live there), else None (the app's own worker processes search)."""
    if (
        not settings.solver_jobs
        or make_url(settings.database_url).get_backend_name() != "postgresql"
    ):
        return None
    app = make_jobs(settings.database_url)
    return Queue(app, partial(defer_judge, app), partial(defer_analyse, app))


def defer_judge(app: procrastinate.App, game: str, deal: int) -> None:
    """``Solver.judge_later``: from the thread that committed a game's end."""
    with suppress(AlreadyEnqueued):
        deferrer(app, "judge", f"judge:{game}:{deal}").defer(game=game, deal=deal)


@jobs.periodic(cron="17 * * * *", periodic_id="ensure_pools")
@jobs.task(name="ensure_pools", queue=QUEUE, queueing_lock="ensure_pools")
def ensure_pools(timestamp: int) -> None:
    if get_settings().certified_pool_target > 0:
        for game in GAMES:
            defer_fill(game)


@jobs.periodic(cron="* * * * *", periodic_id="retry_stalled")
@jobs.task(name="retry_stalled", queue=QUEUE, queueing_lock="retry_stalled", pass_context=True)
async def retry_stalled(context: procrastinate.JobContext, timestamp: int) -> None:
    await requeue_stalled(context.app)


async def requeue_stalled(app: procrastinate.App, seconds: float = STALLED_SECONDS) -> list[int]:
    """Jobs whose worker sent no heartbeat for ``seconds`` (it crashed, or its machine did) go
    back to the queue, for another worker to take. Returns their ids."""
    stalled = list(await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds))
    for job in stalled:
        log.warning("job %s (%s) lost its worker: queued again", job.id, job.task_name)
        await app.job_manager.retry_job(job)
    return [job.id for job in stalled if job.id is not None]


def main(argv: list[str] | None = None) -> None:
    """``python -m app.jobs [--one-shot]``: a solver worker, its log lines JSON."""
    import sys

    from app.serve import json_log_config

    logging.config.dictConfig(json_log_config())
    args = sys.argv[1:] if argv is None else argv
    settings = get_settings()
    jobs.run_worker(
        queues=[QUEUE],
        concurrency=max(1, settings.solver_workers),
        wait="--one-shot" not in args,
        install_signal_handlers=True,
    )


def apply_schema(database_url: str) -> bool:
    """Creates the queue's tables unless they exist (under an advisory lock: several
    ``migrate`` at once are safe). Returns whether it created them."""
    with psycopg.connect(conninfo(database_url), autocommit=True) as db:
        db.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            found = db.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if found is not None and found[0] is not None:
                return False
            db.execute(procrastinate.schema.SchemaManager.get_schema())
            return True
        finally:
            db.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))
