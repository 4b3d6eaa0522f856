"""The solver service's state: its database, worker pool, budgets and the judging tasks' loop;
the use cases are app/services/coach.py (hints, analyses) and app/services/solver.py (verdicts,
judging, the certified pool)."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from app.services.games import Games
from app.services.solver_jobs import (
    ANALYSIS_NODES,
    BUSY_SLACK_SECONDS,
    HINT_NODES,
    JUDGE_NODES,
    Verdict,
)
from app.services.solver_pool import CpuShare, SolverPool
from app.services.verdicts import deal_winnable

log = logging.getLogger("app.services.solver")


@dataclass
class SolverBase:
    sessions: sessionmaker[Session]
    deal_key: bytes
    games: Games
    pool: SolverPool
    hint_seconds: float = 2.0
    # The analysis of a finished game: all its searches within this many seconds.
    analysis_seconds: float = 5.0
    # A deal is judged when a game of it ends, within this many seconds (0: never).
    judge_seconds: float = 3.0
    judge_nodes: int = JUDGE_NODES
    hint_nodes: int = HINT_NODES
    analysis_nodes: int = ANALYSIS_NODES
    # Off: positions alone bound every search, and a worker's answer is awaited however long
    # it takes (the test suite: answers then do not depend on how busy the machine is).
    time_limits: bool = True
    # Judging waits while this process uses more than this share of a core (0: never waits).
    judge_busy_share: float = 0.25
    busy: CpuShare = field(default_factory=CpuShare)
    _rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)
    # The event loop the judging tasks run on (set at start-up), the tasks under way (a
    # reference keeps a task from being collected) and the deals they judge (one at a time).
    loop: asyncio.AbstractEventLoop | None = None
    _tasks: set[asyncio.Task[Verdict | None]] = field(default_factory=set)
    _judging: set[tuple[str, int]] = field(default_factory=set)
    _pools: tuple[float, frozenset[str]] | None = None  # (read at, games with a pool)
    # Set when the solver workers are a service of their own (SOLVER_JOBS, app/jobs/): an
    # ended game's deal is queued there as a durable job instead of judged in this process.
    judge_later: Callable[[str, int], None] | None = None
    # Likewise the analysis of a finished game (game id, game, deal, moves in force): queued
    # for the workers, which store it with the game; a request waits for it this long at most.
    analyse_later: Callable[[str, str, int, list[str]], None] | None = None
    analysis_wait_seconds: float = 10.0

    def _budget(self, seconds: float) -> float | None:
        """The seconds a search may take, or None: positions alone (``time_limits`` off)."""
        return seconds if self.time_limits else None

    def _wait(self, seconds: float) -> float | None:
        """How long to wait for a worker that searches for ``seconds``: a free one may be a
        while coming (``BUSY_SLACK_SECONDS``); None (for good) when ``time_limits`` is off."""
        return seconds + BUSY_SLACK_SECONDS if self.time_limits else None

    def verdict(self, slug: str, number: int) -> bool | None:
        """Whether a deal can be won (None: not judged, or undecided)."""
        with self.sessions() as db:
            return deal_winnable(db, slug, number)
