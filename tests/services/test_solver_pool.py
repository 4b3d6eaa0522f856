"""The solver's worker processes end with the app process that started them, however it ends
(here: ``os._exit``, as after ``kill -9``), instead of running on for good."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from app.config import PROJECT_DIR
from tests.aio import run

SCRIPT = """
import os, sys
from app.services.solver_pool import SolverPool

async def main():
    pool = SolverPool(1)
    pid = await pool.run(30, os.getpid)
    print(pid, flush=True)
    os._exit(0)  # no shutdown, no atexit: the way a killed app goes

import asyncio
asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has ended; only its entry is left
        return stat.read().split(") ", 1)[1][0] != "Z"


@pytest.mark.slow
def test_a_worker_ends_when_its_app_process_is_gone() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=PROJECT_DIR, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    worker = int(done.stdout.split()[0])
    assert worker != os.getpid()
    deadline = time.monotonic() + 30
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker), "the solver's worker outlived its app process"


@pytest.mark.slow
def test_searches_run_below_the_apps_priority() -> None:

    from app.services.solver_pool import SOLVER_NICENESS, SolverPool

    async def niceness() -> int | None:
        pool = SolverPool(1)
        try:
            return await pool.run(30, os.nice, 0)
        finally:
            pool.close()

    # Niceness stops at 19: a suite that itself runs below normal priority (``nice -n 10``)
    # sees its workers at 19, not at 10 + 19 (that failed a niced CI run).
    assert run(niceness()) == min(19, os.nice(0) + SOLVER_NICENESS)


@pytest.mark.slow
def test_searches_run_only_on_idle_cores_on_linux() -> None:
    """The idle scheduling class: a woken request takes the core from a search at once
    (niceness alone still cost the moves' tail under load, bench/RESULTS.md)."""
    from app.services.solver_pool import SolverPool

    if not hasattr(os, "SCHED_IDLE"):
        pytest.skip("no idle scheduling class here: niceness is all there is (tested above)")

    async def policy() -> int | None:
        pool = SolverPool(1)
        try:
            return await pool.run(30, os.sched_getscheduler, 0)
        finally:
            pool.close()

    assert run(policy()) == os.SCHED_IDLE
    assert os.sched_getscheduler(0) != os.SCHED_IDLE  # the app itself keeps its class


@pytest.mark.slow
def test_searches_may_run_at_the_apps_own_priority() -> None:
    """SOLVER_IDLE_PRIORITY=false (the test suite): on a machine whose cores other processes
    hold, an idle-class worker would get no CPU at all."""
    from app.services.solver_pool import SolverPool

    if not hasattr(os, "sched_getscheduler"):
        pytest.skip("no scheduling classes here")

    async def priority() -> tuple[int | None, int | None]:
        pool = SolverPool(1, idle=False)
        try:
            return await pool.run(30, os.nice, 0), await pool.run(30, os.sched_getscheduler, 0)
        finally:
            pool.close()

    assert run(priority()) == (os.nice(0), os.sched_getscheduler(0))


def _end_the_worker() -> int:
    os._exit(3)  # in the worker: it ends under the call, as a killed one does


def test_a_worker_that_dies_mid_search_is_replaced(caplog: pytest.LogCaptureFixture) -> None:
    """A worker killed under a search (out of memory, ``kill``, a shutdown that signals the
    whole process group) breaks its executor for good: that search has no answer, said in one
    line, and the next search runs on new workers instead of failing like it (every hint of
    the app process did, until a restart)."""
    from app.services.solver_pool import SolverPool

    async def die_then_search() -> tuple[int | None, int | None, int | None]:
        pool = SolverPool(1, idle=False)
        try:
            first = await pool.run(30, os.getpid)
            died = await pool.run(30, _end_the_worker)
            return first, died, await pool.run(30, os.getpid)
        finally:
            pool.close()

    with caplog.at_level("WARNING", "app.services.solver_pool"):
        first, died, after = run(die_then_search())
    assert died is None
    assert first is not None and after is not None and after != first  # a new worker
    assert [r.getMessage() for r in caplog.records] == [
        "a solver worker ended abruptly: that search has no answer; new workers take the next"
    ]
    assert not any(r.exc_info for r in caplog.records)  # a line, not a traceback
