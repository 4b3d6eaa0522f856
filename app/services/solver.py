"""The solver as a service: hints, the solver's verdicts on deals, and the certified pool.

Searches run in worker processes (``SolverPool``), each within a time budget that the worker
checks through the clock the service hands the pure solver; the web layer awaits them without
blocking the event loop or the threads that play moves, so a slow search never delays a move.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import secrets
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from anyio import to_thread
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import DealVerdict, Game, GameHint
from app.db.session import make_engine, make_sessionmaker
from app.engine import GAMES, Move, UnknownGame, get_ruleset, loads
from app.services import stats
from app.services.errors import Forbidden, GameOver, InvalidRequest, NoCertifiedDeals, NotFound
from app.services.games import Games, GameView, _plausible
from app.services.players import now
from app.solver import Budget, Outcome, hint, solve

T = TypeVar("T")

HINT_NODES = 2_000_000  # the time budget ends hint searches first on this machine
CERTIFY_NODES = 300_000
CERTIFY_SECONDS = 10.0
BUSY_SLACK_SECONDS = 5.0  # waiting for a free worker, on top of the search's own budget


def _deadline_check(seconds: float) -> Callable[[], bool]:
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() > deadline


def hint_job(state_text: str, seconds: float, nodes: int = HINT_NODES) -> dict[str, Any]:
    """A hint for a stored state; runs in a worker process."""
    given = hint(loads(state_text), Budget(nodes=nodes, out_of_time=_deadline_check(seconds)))
    move = given.move
    return {
        "move": None
        if move is None
        else {"from": move.source, "to": move.target, "count": move.count},
        "outcome": given.outcome.value,
        "exact": given.exact,
        "message": given.message,
    }


@dataclass(frozen=True)
class Verdict:
    game: str
    deal: int
    outcome: Outcome
    solution: tuple[Move, ...]
    positions: int


def judge_deal(
    slug: str, number: int, key: bytes, nodes: int = CERTIFY_NODES, seconds: float = 60.0
) -> Verdict:
    """Solve a deal with every card known; a winning line is shortened and replayed through the
    engine before it is believed."""
    rules = get_ruleset(slug)
    deal = rules.deal(number, key)
    result = solve(deal, Budget(nodes=nodes, out_of_time=_deadline_check(seconds)))
    if result.outcome is Outcome.WINNABLE and not rules.is_won(rules.replay(deal, result.moves)):
        raise AssertionError(f"{slug} deal {number}: the solver's line does not win")
    return Verdict(slug, number, result.outcome, result.moves, result.nodes)


class SolverPool:
    """Worker processes for searches, started on first use (``spawn``: no forked threads)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    async def run(self, timeout: float, fn: Callable[..., T], *args: Any) -> T | None:
        """``fn(*args)`` in a worker; None when it has not answered within ``timeout``."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor(), fn, *args)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


@dataclass
class Solver:
    sessions: sessionmaker[Session]
    deal_key: bytes
    games: Games
    pool: SolverPool
    hint_seconds: float = 2.0
    _rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)

    # -- hints ------------------------------------------------------------------------------

    def hint_position(self, game_id: str, player_id: str) -> tuple[str, int]:
        """The stored state and version of the caller's game in play (owner only)."""
        view = self._own_game(game_id, player_id)
        if view.finished:
            raise GameOver("The game is over: there is nothing left to hint.")
        return view.record.state, view.record.version

    def hints_used(self, game_id: str) -> int:
        with self.sessions() as db:
            return db.scalar(select(GameHint.hints).where(GameHint.game_id == game_id)) or 0

    def record_hint(self, game_id: str) -> int:
        """Counts a hint given; the number of hints so far.

        A game is casual from its first hint on: a rated one stops being rated (it still
        counts as played, can no longer add a win, and ends the player's streaks).
        """
        with self.sessions.begin() as db:
            game = db.get(Game, game_id, with_for_update=True)
            row = db.get(GameHint, game_id)
            if row is not None:
                row.hints += 1
                return row.hints
            db.add(GameHint(game_id=game_id, hints=1, first_at=now()))
            if game is not None and game.rated:
                game.rated = False
                db.flush()
                stats.count_hinted(db.connection(), game.player_id, game.game)
            return 1

    async def hint(self, game_id: str, player_id: str) -> dict[str, Any]:
        state_text, version = await to_thread.run_sync(self.hint_position, game_id, player_id)
        answer = await self.pool.run(
            self.hint_seconds + BUSY_SLACK_SECONDS, hint_job, state_text, self.hint_seconds
        )
        if answer is None:
            answer = {
                "move": None,
                "outcome": Outcome.UNKNOWN.value,
                "exact": False,
                "message": "The solver is busy: no hint this time. Try again in a moment.",
            }
            hints = await to_thread.run_sync(self.hints_used, game_id)
        else:
            hints = await to_thread.run_sync(self.record_hint, game_id)
        return {**answer, "version": version, "hints_used": hints, "casual": hints > 0}

    def _own_game(self, game_id: str, player_id: str) -> GameView:
        if not _plausible(game_id):
            raise NotFound("There is no game with that id.")
        view = self.games.get(game_id, player_id)
        if view.record.player_id != player_id:
            raise Forbidden("This game belongs to another player.")
        return view

    # -- verdicts and the certified pool ------------------------------------------------------

    def verdict(self, slug: str, number: int) -> bool | None:
        """Whether a deal can be won (None: not judged, or undecided)."""
        with self.sessions() as db:
            outcome = db.scalar(
                select(DealVerdict.outcome).where(
                    DealVerdict.game == slug, DealVerdict.deal == number
                )
            )
        return {"winnable": True, "lost": False}.get(outcome or "")

    def solution(self, slug: str, number: int) -> list[str] | None:
        with self.sessions() as db:
            text = db.scalar(
                select(DealVerdict.solution).where(
                    DealVerdict.game == slug,
                    DealVerdict.deal == number,
                    DealVerdict.outcome == Outcome.WINNABLE.value,
                )
            )
        return None if text is None else text.split()

    def store(self, verdict: Verdict, *, certified: bool) -> None:
        with self.sessions.begin() as db:
            row = db.get(DealVerdict, (verdict.game, verdict.deal))
            if row is None:
                row = DealVerdict(game=verdict.game, deal=verdict.deal, created_at=now())
                db.add(row)
            row.outcome = verdict.outcome.value
            row.solution = " ".join(str(m) for m in verdict.solution) or None
            row.positions = verdict.positions
            row.certified = certified and verdict.outcome is Outcome.WINNABLE

    def pool_size(self, slug: str) -> int:
        with self.sessions() as db:
            return (
                db.scalar(
                    select(func.count()).where(DealVerdict.game == slug, DealVerdict.certified)
                )
                or 0
            )

    def next_candidate(self, slug: str) -> int:
        """Certification judges deals 1, 2, 3, …: the next one not judged yet."""
        with self.sessions() as db:
            highest = db.scalar(select(func.max(DealVerdict.deal)).where(DealVerdict.game == slug))
        return (highest or 0) + 1

    def certify(
        self,
        slug: str,
        count: int,
        *,
        nodes: int = CERTIFY_NODES,
        seconds: float = CERTIFY_SECONDS,
        progress: Callable[[int, int, Verdict | None], None] | None = None,
    ) -> int:
        """Judge deals until the pool of ``slug`` holds ``count`` certified winnable deals.

        Every verdict is stored as soon as it is found, so an interrupted run resumes where it
        stopped. Returns the pool's size.
        """
        if slug not in GAMES:
            raise InvalidRequest(f"There is no game called {slug!r}.")
        have = self.pool_size(slug)
        if progress:
            progress(have, count, None)
        while have < count:
            verdict = judge_deal(slug, self.next_candidate(slug), self.deal_key, nodes, seconds)
            self.store(verdict, certified=True)
            have += verdict.outcome is Outcome.WINNABLE
            if progress:
                progress(have, count, verdict)
        return have

    def start_winnable(self, player_id: str, slug: str) -> GameView:
        """A casual game of a deal drawn from the certified pool."""
        try:
            get_ruleset(slug)
        except UnknownGame as exc:
            raise InvalidRequest(str(exc)) from None
        with self.sessions() as db:
            deals = db.scalars(
                select(DealVerdict.deal).where(DealVerdict.game == slug, DealVerdict.certified)
            ).all()
        if not deals:
            raise NoCertifiedDeals(
                f"No {GAMES[slug].name} deal has been certified winnable yet "
                f"(an operator runs: python -m app.cli certify --game {slug} --count N)."
            )
        return self.games.start(player_id, slug, self._rng.choice(deals))


@contextmanager
def open_solver(database_url: str, deal_key: bytes) -> Iterator[Solver]:
    """The solver use cases over a database of their own, for operator commands."""
    engine = make_engine(database_url, pool_size=1)
    sessions = make_sessionmaker(engine)
    games = Games(sessions, deal_key)
    solver = Solver(sessions, deal_key, games, SolverPool(1))
    try:
        yield solver
    finally:
        solver.pool.close()
        games.close()
        engine.dispose()
