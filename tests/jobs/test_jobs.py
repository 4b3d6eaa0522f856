"""app/jobs: the solver's durable jobs: connection strings, what each deferral queues (task, queue,
queueing lock), judge, analyse and fill_pool's rounds over a fake solver, the periodic tasks, the
requeueing of stalled jobs, the worker's arguments; the queue's schema and locks on PostgreSQL.
(Workers taking jobs for real, ``python -m app.jobs``: tests/deploy/test_compose.py.)"""

from __future__ import annotations

import datetime
import logging.config
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import procrastinate
import psycopg
import pytest
from procrastinate.testing import InMemoryConnector
from psycopg.conninfo import conninfo_to_dict

from app import jobs as app_jobs
from app.config import Settings
from app.engine import GAMES
from app.jobs import (
    FILL_JOB_SECONDS,
    POOL_BATCH,
    QUEUE,
    STALLED_SECONDS,
    analyse,
    apply_schema,
    conninfo,
    defer_analyse,
    defer_fill,
    defer_judge,
    deferrer,
    ensure_pools,
    fill_pool,
    judge,
    main,
    make_jobs,
    queue_of,
    requeue_stalled,
    retry_stalled,
)
from app.serve import json_log_config
from app.services.solver_jobs import Verdict
from app.solver import Outcome
from tests.aio import run
from tests.databases import fresh_postgres_database
from tests.waiting import wait_until

# Procrastinate's synchronous API, off the main thread where a browser test may have left
# Playwright's event loop (tests/conftest.py).
pytestmark = pytest.mark.own_thread

PG_URL = "postgresql+psycopg://hall:s%40cret@db.example:5433/hall?sslmode=require"


def pool_conninfo(app: procrastinate.App) -> object:
    """What an app's PsycopgConnector hands its pool as ``conninfo`` (procrastinate keeps the
    pool's arguments in ``_pool_args``; the pool opens only when the app does)."""
    return cast(Any, app.connector)._pool_args["conninfo"]


# -- the in-memory queue --------------------------------------------------------------------


@dataclass
class Memory:
    """The job app over procrastinate's in-memory connector, put in place of ``app.jobs.jobs``
    (so that ``defer_fill(game)`` without an app, as the tasks call it, lands here too)."""

    connector: InMemoryConnector
    app: procrastinate.App

    def queued(self) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """(task, queue, queueing lock, arguments) of each job still to do, in order."""
        return [
            (row["task_name"], row["queue_name"], row["queueing_lock"], row["args"])
            for row in self.connector.jobs.values()
            if row["status"] == "todo"
        ]

    def start(self, job_id: int, worker: int, beat_seconds_ago: float) -> None:
        """A worker took the job; its last heartbeat was ``beat_seconds_ago``."""
        beat = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=beat_seconds_ago)
        self.connector.workers[worker] = beat
        self.connector.jobs[job_id].update(status="doing", worker_id=worker)


@pytest.fixture()
def memory(monkeypatch: pytest.MonkeyPatch) -> Memory:
    connector = InMemoryConnector()
    app = app_jobs.jobs.with_connector(connector)
    monkeypatch.setattr(app_jobs, "jobs", app)
    return Memory(connector, app)


# -- a fake solver, settings and clock ------------------------------------------------------


@dataclass
class FakeSolver:
    """The part of app.services.solver.Solver the jobs use. ``certify`` judges the scripted
    ``finds`` (winnable or not) one deal at a time, each taking ``step`` seconds of ``clock``,
    and reports each to ``progress`` as the real one does."""

    pool: int = 0
    finds: list[bool] = field(default_factory=list)
    step: float = 1.0
    clock: list[float] = field(default_factory=lambda: [0.0])
    deal_key: bytes = b"the key"
    verdict_known: bool = False
    analysis: bool = True
    asked: list[int] = field(default_factory=list)
    judged: int = 0
    stored: list[Verdict] = field(default_factory=list)
    analysed: list[tuple[str, str, int, list[str]]] = field(default_factory=list)

    def pool_size(self, slug: str) -> int:
        return self.pool

    def certify(
        self, slug: str, count: int, *, progress: Callable[[int, int, Verdict | None], None]
    ) -> int:
        self.asked.append(count)
        progress(self.pool, count, None)
        while self.pool < count and self.finds:
            winnable = self.finds.pop(0)
            self.clock[0] += self.step
            self.judged += 1
            self.pool += winnable
            outcome = Outcome.WINNABLE if winnable else Outcome.LOST
            progress(self.pool, count, Verdict(slug, self.judged, outcome, (), 10))
        return self.pool

    def needs_verdict(self, slug: str, number: int) -> bool:
        return not self.verdict_known

    def store_judged(self, verdict: Verdict) -> None:
        self.stored.append(verdict)

    def analyse_now(self, game_id: str, slug: str, number: int, moves: list[str]) -> bool:
        self.analysed.append((game_id, slug, number, moves))
        return self.analysis


@pytest.fixture()
def solver(monkeypatch: pytest.MonkeyPatch) -> FakeSolver:
    """The solver the tasks open (through app.bootstrap.opened), and the clock they read."""
    fake = FakeSolver()

    @contextmanager
    def opened(settings: Settings) -> Iterator[SimpleNamespace]:
        yield SimpleNamespace(solver=fake)

    monkeypatch.setattr(app_jobs, "opened", opened)
    monkeypatch.setattr(app_jobs, "time", SimpleNamespace(monotonic=lambda: fake.clock[0]))
    return fake


@pytest.fixture()
def settings(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``settings(**values)``: what the tasks read through get_settings from then on."""

    def use(**values: Any) -> None:
        monkeypatch.setattr(app_jobs, "get_settings", lambda: Settings(**values))

    use()
    return use


# -- connection strings ---------------------------------------------------------------------


def test_conninfo_is_the_libpq_form_of_the_apps_url_with_its_password() -> None:
    found = conninfo(PG_URL)
    assert found.startswith("postgresql://")  # no SQLAlchemy driver name: libpq refuses one
    assert conninfo_to_dict(found) == {
        "user": "hall",
        "password": "s@cret",  # shown, and still escaped in the URL
        "host": "db.example",
        "port": "5433",
        "dbname": "hall",
        "sslmode": "require",
    }


def test_the_module_app_reads_the_database_url_when_it_connects_not_on_import(
    settings: Callable[..., None],
) -> None:
    later = pool_conninfo(app_jobs.jobs)
    assert callable(later)
    settings(database_url=PG_URL)
    assert later() == conninfo(PG_URL)
    settings(database_url="postgresql+psycopg://other@elsewhere/db")
    assert later() == "postgresql://other@elsewhere/db"


def test_make_jobs_is_the_same_tasks_over_the_given_database() -> None:
    made = make_jobs(PG_URL)
    assert pool_conninfo(made) == conninfo(PG_URL)
    assert made.tasks is app_jobs.jobs.tasks
    assert {"judge", "analyse", "fill_pool", "ensure_pools", "retry_stalled"} <= set(made.tasks)
    assert callable(pool_conninfo(app_jobs.jobs))  # the module's own app is left as it was


# -- what a deferral queues -----------------------------------------------------------------


def test_each_name_deferred_by_name_is_a_task_on_the_solver_queue_tried_three_times() -> None:
    for name in ("judge", "analyse", "fill_pool"):
        task = app_jobs.jobs.tasks[name]
        assert task.queue == QUEUE == "solver"
        strategy = task.retry_strategy
        assert isinstance(strategy, procrastinate.RetryStrategy) and strategy.max_attempts == 3


def test_defer_fill_queues_one_fill_per_game_until_it_is_taken(memory: Memory) -> None:
    assert defer_fill("corners") is True
    assert defer_fill("corners") is False  # queued already
    assert defer_fill("castles-end", memory.app) is True
    assert memory.queued() == [
        ("fill_pool", QUEUE, "fill_pool:corners", {"game": "corners"}),
        ("fill_pool", QUEUE, "fill_pool:castles-end", {"game": "castles-end"}),
    ]
    # Once a worker has taken it, the running job may queue the next round of its game.
    memory.start(1, worker=1, beat_seconds_ago=0)
    assert defer_fill("corners") is True


def test_defer_judge_queues_a_deal_once_and_says_nothing_the_second_time(
    memory: Memory,
) -> None:
    defer_judge(memory.app, "corners", 7)
    defer_judge(memory.app, "corners", 7)  # a second game of the deal ended: no error
    defer_judge(memory.app, "corners", 8)
    assert memory.queued() == [
        ("judge", QUEUE, "judge:corners:7", {"game": "corners", "deal": 7}),
        ("judge", QUEUE, "judge:corners:8", {"game": "corners", "deal": 8}),
    ]


def test_defer_analyse_queues_a_game_once_while_it_waits(memory: Memory) -> None:
    moves = ["t1-f", "t2-t3"]
    defer_analyse(memory.app, "g1", "corners", 7, moves)
    defer_analyse(memory.app, "g1", "corners", 7, moves)  # asked again while waiting
    defer_analyse(memory.app, "g2", "corners", 7, [])
    args = {"game_id": "g1", "game": "corners", "deal": 7, "moves": moves}
    assert memory.queued() == [
        ("analyse", QUEUE, "analyse:g1", args),
        ("analyse", QUEUE, "analyse:g2", {**args, "game_id": "g2", "moves": []}),
    ]


def test_a_deferrer_without_a_lock_queues_every_time(memory: Memory) -> None:
    first = deferrer(memory.app, "judge").defer(game="corners", deal=1)
    second = deferrer(memory.app, "judge").defer(game="corners", deal=1)
    assert first != second
    assert [lock for _, _, lock, _ in memory.queued()] == [None, None]


# -- the queue the app hands its work to ----------------------------------------------------


@pytest.mark.parametrize(
    ("solver_jobs", "url"),
    [(False, PG_URL), (True, "sqlite:///data/hall.db")],
    ids=["jobs-off", "on-sqlite"],
)
def test_no_queue_without_solver_jobs_on_postgresql(solver_jobs: bool, url: str) -> None:
    assert queue_of(Settings(solver_jobs=solver_jobs, database_url=url)) is None


def test_the_queue_defers_through_its_own_app_over_the_settings_database(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []

    def make(database_url: str) -> procrastinate.App:
        made.append(database_url)
        return memory.app

    monkeypatch.setattr(app_jobs, "make_jobs", make)
    queue = queue_of(Settings(solver_jobs=True, database_url=PG_URL))
    assert queue is not None and queue.app is memory.app and made == [PG_URL]
    queue.judge_later("patriarchs", 12)
    queue.analyse_later("g1", "patriarchs", 12, ["w-f"])
    assert [(task, lock) for task, _, lock, _ in memory.queued()] == [
        ("judge", "judge:patriarchs:12"),
        ("analyse", "analyse:g1"),
    ]


# -- the periodic tasks ---------------------------------------------------------------------


def test_ensure_pools_queues_one_fill_per_game_and_not_twice(
    memory: Memory, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=5)
    ensure_pools(0)
    ensure_pools(60)  # the next hour, before a worker took them
    assert [lock for _, _, lock, _ in memory.queued()] == [f"fill_pool:{g}" for g in GAMES]


def test_ensure_pools_queues_nothing_without_a_pool_target(
    memory: Memory, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=0)
    ensure_pools(0)
    assert memory.queued() == []


def test_the_periodic_tasks_run_hourly_and_every_minute_never_stacked() -> None:
    registered = app_jobs.jobs.periodic_registry.periodic_tasks.values()
    periodic = {task.task.name: task.cron for task in registered}
    assert periodic == {"ensure_pools": "17 * * * *", "retry_stalled": "* * * * *"}
    for name in periodic:
        task = app_jobs.jobs.tasks[name]
        assert task.queue == QUEUE and task.queueing_lock == name


def test_jobs_of_workers_silent_for_thirty_seconds_go_back_to_the_queue(memory: Memory) -> None:
    for deal in (1, 2, 3):
        defer_judge(memory.app, "corners", deal)
    memory.start(1, worker=1, beat_seconds_ago=STALLED_SECONDS + 10)  # its worker is gone
    memory.start(2, worker=2, beat_seconds_ago=STALLED_SECONDS - 20)  # still beating
    assert STALLED_SECONDS == 30.0
    assert run(requeue_stalled(memory.app)) == [1]
    status = {job_id: row["status"] for job_id, row in memory.connector.jobs.items()}
    assert status == {1: "todo", 2: "doing", 3: "todo"}
    assert run(requeue_stalled(memory.app, seconds=5.0)) == [2]  # a shorter limit


def test_retry_stalled_requeues_through_the_app_running_it(memory: Memory) -> None:
    defer_judge(memory.app, "corners", 1)
    memory.start(1, worker=1, beat_seconds_ago=STALLED_SECONDS + 10)
    context = cast(procrastinate.JobContext, SimpleNamespace(app=memory.app))
    run(retry_stalled(context, 0))
    assert memory.connector.jobs[1]["status"] == "todo"


# -- judge and analyse ----------------------------------------------------------------------


def test_judge_leaves_a_deal_with_a_verdict_alone(
    solver: FakeSolver, settings: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: Any) -> Verdict:
        raise AssertionError("searched a deal that has a verdict")

    monkeypatch.setattr(app_jobs, "judge_deal", never)
    solver.verdict_known = True
    assert judge("corners", 7) == "known"
    assert solver.stored == []


@pytest.mark.parametrize(
    ("limits", "judge_seconds", "seconds"),
    [(True, 2.5, 2.5), (True, 0.0, 3.0), (False, 2.5, None)],
    ids=["limited", "zero-means-default", "positions-only"],
)
def test_judge_searches_within_the_settings_budget_and_stores_the_verdict(
    solver: FakeSolver,
    settings: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    limits: bool,
    judge_seconds: float,
    seconds: float | None,
) -> None:
    settings(solver_time_limits=limits, solver_judge_seconds=judge_seconds, solver_judge_nodes=99)
    calls: list[tuple[Any, ...]] = []
    verdict = Verdict("corners", 7, Outcome.LOST, (), 42)

    def judge_deal(*args: Any) -> Verdict:
        calls.append(args)
        return verdict

    monkeypatch.setattr(app_jobs, "judge_deal", judge_deal)
    assert judge("corners", 7) == "lost"
    assert calls == [("corners", 7, b"the key", 99, seconds)]
    assert solver.stored == [verdict]


@pytest.mark.parametrize("decided", [True, False])
def test_analyse_answers_whether_the_solver_stored_an_analysis(
    solver: FakeSolver, settings: Callable[..., None], decided: bool
) -> None:
    solver.analysis = decided
    assert analyse("g1", "castles-end", 3, ["t1-f"]) is decided
    assert solver.analysed == [("g1", "castles-end", 3, ["t1-f"])]


# -- fill_pool's rounds ---------------------------------------------------------------------


def test_a_full_pool_is_left_alone(
    memory: Memory, solver: FakeSolver, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=4)
    solver.pool = 4
    assert fill_pool("corners") == 4
    assert solver.asked == [] and memory.queued() == []


def test_a_round_certifies_a_few_deals_then_queues_the_next_round(
    memory: Memory, solver: FakeSolver, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=20)
    solver.pool, solver.finds = 5, [True, False, True, True, True, True]
    assert fill_pool("corners") == 5 + POOL_BATCH
    assert solver.asked == [5 + POOL_BATCH] and solver.judged == 4
    assert memory.queued() == [("fill_pool", QUEUE, "fill_pool:corners", {"game": "corners"})]


def test_the_round_that_reaches_the_target_queues_no_other(
    memory: Memory, solver: FakeSolver, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=6)
    solver.pool, solver.finds = 5, [True, True, True]
    assert fill_pool("corners") == 6
    assert solver.asked == [6]  # never past the target
    assert memory.queued() == []


def test_a_round_stops_when_its_time_is_up_and_queues_the_next_if_it_found_a_deal(
    memory: Memory, solver: FakeSolver, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=20)
    solver.finds, solver.step = [True] + [False] * 10, FILL_JOB_SECONDS / 2.5
    assert fill_pool("quadruple-interchange") == 1
    assert solver.judged == 3  # the third deal ended past the minute: no fourth
    assert [lock for _, _, lock, _ in memory.queued()] == ["fill_pool:quadruple-interchange"]


def test_a_round_that_found_nothing_in_its_time_queues_no_other(
    memory: Memory, solver: FakeSolver, settings: Callable[..., None]
) -> None:
    settings(certified_pool_target=20)
    solver.pool, solver.finds, solver.step = 2, [False] * 10, FILL_JOB_SECONDS / 2.5
    assert fill_pool("quadruple-interchange") == 2
    assert solver.judged == 3
    assert memory.queued() == []  # ensure_pools tries the game again an hour later


# -- the worker's entry point ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "command_line", "wait"),
    [(["--one-shot"], [], False), ([], ["--one-shot"], True), (None, ["--one-shot"], False)],
    ids=["one-shot", "waits", "from-sys-argv"],
)
def test_main_runs_a_worker_on_the_solver_queue_with_json_lines(
    monkeypatch: pytest.MonkeyPatch,
    settings: Callable[..., None],
    argv: list[str] | None,
    command_line: list[str],
    wait: bool,
) -> None:
    settings(solver_workers=3)
    logging_configs: list[dict[str, Any]] = []
    workers: list[dict[str, Any]] = []
    monkeypatch.setattr(logging.config, "dictConfig", logging_configs.append)
    monkeypatch.setattr(app_jobs.jobs, "run_worker", lambda **kwargs: workers.append(kwargs))
    monkeypatch.setattr(sys, "argv", ["app.jobs", *command_line])
    main(argv)
    assert logging_configs == [json_log_config()]
    assert workers == [
        {"queues": [QUEUE], "concurrency": 3, "wait": wait, "install_signal_handlers": True}
    ]


# -- on PostgreSQL: the schema and the queueing locks ----------------------------------------


def _waiting_for_the_schema_lock(url: str) -> int:
    with psycopg.connect(conninfo(url)) as db:
        found = db.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
    return 0 if found is None else int(found[0])


@pytest.mark.postgres
def test_apply_schema_creates_the_queue_once_when_several_migrate_at_once() -> None:
    queue_database = fresh_postgres_database("jobs_schema")
    results: list[bool] = []
    with psycopg.connect(conninfo(queue_database), autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (app_jobs._SCHEMA_LOCK,))
        threads = [
            threading.Thread(target=lambda: results.append(apply_schema(queue_database)))
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        wait_until(lambda: _waiting_for_the_schema_lock(queue_database) == 2, "both waiting")
        holder.execute("SELECT pg_advisory_unlock(%s)", (app_jobs._SCHEMA_LOCK,))
        for thread in threads:
            thread.join(30)
    assert sorted(results) == [False, True]
    assert apply_schema(queue_database) is False  # and again later: nothing to do


@pytest.mark.postgres
def test_a_games_fill_is_queued_once_until_a_worker_takes_it() -> None:
    queue_database = fresh_postgres_database("jobs_queue")
    assert apply_schema(queue_database) is True
    with make_jobs(queue_database).open() as queue:
        assert defer_fill("corners", queue) is True
        assert defer_fill("corners", queue) is False
        with psycopg.connect(conninfo(queue_database), autocommit=True) as db:
            db.execute("UPDATE procrastinate_jobs SET status = 'doing'")  # a worker took it
        assert defer_fill("corners", queue) is True  # the running round queues the next
        with psycopg.connect(conninfo(queue_database)) as db:
            rows = db.execute(
                "SELECT task_name, queue_name, queueing_lock, args, status"
                " FROM procrastinate_jobs ORDER BY id"
            ).fetchall()
    job = ("fill_pool", QUEUE, "fill_pool:corners", {"game": "corners"})
    assert rows == [(*job, "doing"), (*job, "todo")]
