"""The solver's worker processes: started on first use, below the app's priority, ended with
the app; and how busy this process is, so that judging waits for a quiet moment."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


def _exit_with_parent(parent: int, idle: bool = True) -> None:
    """In a worker: run below the app's priority (unless ``idle`` is false), and end when the
    app process that started it is gone. Searches use the CPU the moves leave: judging the
    deals of ended games took a core from the moves under load (bench/RESULTS.md). A worker
    kept busy by a search outlived a ``shutdown(wait=False)``, and one whose app was killed
    (``kill -9``, a stopped test server) was left running for good, holding a core."""
    if idle:
        os.nice(SOLVER_NICENESS)
        _run_when_idle()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


# Added to the workers' niceness (19, the most there is): searches yield the CPU to requests.
SOLVER_NICENESS = 19


def _run_when_idle() -> None:
    """On Linux, the idle scheduling class: a search runs only on a core nothing else wants,
    and a woken request takes the core from it at once. Niceness 19 alone still cost the
    moves' tail under load (a nice task keeps its time slice: bench/RESULTS.md, browser path).
    Where the class is missing or refused, niceness is what is left. The class is better than
    niceness, not a guarantee: on a 2-core virtual machine two idle-class busy loops still took
    half a core or more from 500 moves a second (bench/RESULTS.md, 2026-11-29)."""
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is None:
        return
    try:
        os.sched_setscheduler(0, idle, os.sched_param(0))
    except OSError:
        log.warning("the solver's workers could not take the idle scheduling class")


class SolverPool:
    """Worker processes for searches, started on first use (``spawn``: no forked threads);
    ``idle``: at the lowest CPU priority (SOLVER_IDLE_PRIORITY), else at the app's own."""

    def __init__(self, workers: int, *, idle: bool = True) -> None:
        self.workers = workers
        self.idle = idle
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with_parent,
                initargs=(os.getpid(), self.idle),
            )
        return self._pool

    async def run(self, timeout: float | None, fn: Callable[..., T], *args: Any) -> T | None:
        """``fn(*args)`` in a worker; None when it has not answered within ``timeout`` seconds
        (None: it is awaited however long it takes)."""
        loop = asyncio.get_running_loop()
        executor = self._executor()
        try:
            return await asyncio.wait_for(loop.run_in_executor(executor, fn, *args), timeout)
        except TimeoutError:
            return None
        except BrokenProcessPool:
            # A worker ended under a search (out of memory, killed, a shutdown that signals
            # the whole process group): its executor refuses every later search. This one
            # has no answer, as if its time had run out; the next starts new workers.
            if self._pool is executor:
                self._pool = None
                executor.shutdown(wait=False, cancel_futures=True)
            log.warning(
                "a solver worker ended abruptly: that search has no answer; new workers take "
                "the next"
            )
            return None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


@dataclass
class CpuShare:
    """How much of a core this process has used lately: its CPU time over wall time, measured
    over windows of at least ``window`` seconds (the last complete window counts).

    Judging is background work: on a busy machine it takes cores (and, on cores that are
    hyperthreads of one another, execution units) from the moves, however low its priority.
    This process's own share is the signal: it counts the app's threads and not the solver's
    workers, and reads the same inside a container as outside."""

    window: float = 2.0
    wall: Callable[[], float] = time.monotonic
    cpu: Callable[[], float] = time.process_time
    share: float = 0.0
    _since: tuple[float, float] | None = None

    def now(self) -> float:
        wall, cpu = self.wall(), self.cpu()
        if self._since is None:
            self._since = (wall, cpu)
        elif wall - self._since[0] >= self.window:
            self.share = (cpu - self._since[1]) / (wall - self._since[0])
            self._since = (wall, cpu)
        return self.share
