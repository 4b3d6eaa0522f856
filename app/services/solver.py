"""The solver as a service: the coach (hints and analyses, app/services/coach.py), the solver's
verdicts on deals, and the certified pool.

Searches run in worker processes (``SolverPool``, app/services/solver_pool.py; what they run
is app/services/solver_jobs.py), each within a budget of positions and (unless
``time_limits`` is off) a time budget that the worker checks through the clock the service
hands the pure solver; the web layer awaits them without
blocking the event loop or the threads that play moves, so a slow search never delays a move.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TypeVar

from anyio import to_thread
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.db.faults import is_unavailable, summary
from app.db.models import CompetitionDeal, DealVerdict, Game
from app.engine import GAMES, Move, UnknownGame, get_ruleset
from app.services.coach import Coach
from app.services.errors import (
    InvalidRequest,
    NoCertifiedDeals,
    NoCertifiedDealsLeft,
)
from app.services.game_views import GameView
from app.services.players import now
from app.services.solver_jobs import (
    CERTIFY_NODES,
    CERTIFY_SECONDS,
    POOLS_SECONDS,
    Verdict,
    judge_deal,
)
from app.services.verdicts import deal_solution
from app.solver import Outcome

T = TypeVar("T")
log = logging.getLogger(__name__)


def _par(verdict: Verdict) -> int | None:
    """A winnable deal's par: the length of the (shortened) winning line the solver found."""
    return len(verdict.solution) if verdict.outcome is Outcome.WINNABLE else None


class Solver(Coach):
    """The solver as the app uses it: the coach, verdicts on deals (judged when a game of
    them ends), and the certified pool."""

    # -- judging a deal when a game of it ends --------------------------------------------------

    def game_ended(self, slug: str, number: int) -> None:
        """``Games.ended``: called from the thread that committed the game's end. The search
        is handed to the event loop, which runs it in the worker pool: the move that ended the
        game is answered at once, and ``deal_winnable`` shows the verdict once it is stored."""
        if self.judge_later is not None:
            try:
                self.judge_later(slug, number)
            except Exception as exc:  # the game's end is committed: the deal waits for another
                log.warning("queueing %s deal %s to be judged failed: %s", slug, number, exc)
            return
        loop = self.loop
        if loop is None or self.judge_seconds <= 0 or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._start_judging, slug, number)

    def _start_judging(self, slug: str, number: int) -> None:
        if (slug, number) in self._judging:
            return
        if self.judge_busy_share and self.busy.now() > self.judge_busy_share:
            # The app is busy serving play: the deal is judged when a later game of it ends
            # at a quieter moment, or by `certify` (bench/RESULTS.md: judging under load
            # doubled the moves' p99, at the lowest CPU priority too).
            return
        if len(self._judging) >= self.pool.workers:
            # Busy: no backlog of searches behind the games that end under load (each may
            # take JUDGE seconds of a core). This deal is judged when a later game of it
            # ends at a quieter moment, or by `certify`; until then deal_winnable is null.
            return
        self._judging.add((slug, number))
        task = asyncio.get_running_loop().create_task(self.judge_ended(slug, number))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def judge_ended(self, slug: str, number: int) -> Verdict | None:
        """Judges a deal (unless it has a verdict already) and stores what was found; None when
        nothing was searched (judged before, or no worker answered within the budget)."""
        try:
            if not await to_thread.run_sync(self.needs_verdict, slug, number):
                return None
            verdict = await self.pool.run(
                self._wait(self.judge_seconds),
                judge_deal,
                slug,
                number,
                self.deal_key,
                self.judge_nodes,
                self._budget(self.judge_seconds),
            )
            if verdict is not None:
                await to_thread.run_sync(self.store_judged, verdict)
            return verdict
        except Exception as exc:  # the database went away, a worker died: a later game tries again
            if is_unavailable(exc):  # one line, like every other database failure
                log.warning("judging %s deal %s failed: %s", slug, number, summary(exc))
            else:
                log.exception("judging %s deal %s failed", slug, number)
            return None
        finally:
            self._judging.discard((slug, number))

    def needs_verdict(self, slug: str, number: int) -> bool:
        """No verdict yet, or only "unknown" (a later search may decide it: they are cheap)."""
        with self.sessions() as db:
            outcome = db.scalar(
                select(DealVerdict.outcome).where(
                    DealVerdict.game == slug, DealVerdict.deal == number
                )
            )
        return outcome is None or outcome == Outcome.UNKNOWN.value

    def store_judged(self, verdict: Verdict) -> None:
        """Stores a verdict found when a game ended: it never replaces a decided one, and never
        takes a deal out of the certified pool. Two processes that judged the same deal at
        once insert one row; the second insert's conflict is ignored (same verdict)."""
        with suppress(IntegrityError), self.sessions.begin() as db:
            row = db.get(DealVerdict, (verdict.game, verdict.deal), with_for_update=True)
            if row is None:
                db.add(
                    DealVerdict(
                        game=verdict.game,
                        deal=verdict.deal,
                        outcome=verdict.outcome.value,
                        solution=" ".join(str(m) for m in verdict.solution) or None,
                        positions=verdict.positions,
                        certified=False,
                        created_at=now(),
                        par=_par(verdict),
                    )
                )
            elif row.outcome == Outcome.UNKNOWN.value:
                row.outcome = verdict.outcome.value
                row.solution = " ".join(str(m) for m in verdict.solution) or None
                row.positions = max(row.positions, verdict.positions)
                row.par = _par(verdict)

    # -- verdicts and the certified pool ------------------------------------------------------

    def solution(self, slug: str, number: int) -> list[str] | None:
        """The stored winning line of a winnable deal (None: none known)."""
        with self.sessions() as db:
            return deal_solution(db, slug, number)

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
            row.par = _par(verdict)
        if certified:
            self._pools = None  # this process certified a deal: read the pools afresh

    def pool_size(self, slug: str) -> int:
        with self.sessions() as db:
            return (
                db.scalar(
                    select(func.count()).where(DealVerdict.game == slug, DealVerdict.certified)
                )
                or 0
            )

    def next_candidate(self, slug: str) -> int:
        """Certification walks deals 1, 2, 3, …: the one after the highest certified deal.
        (Deals judged when a game ended are any numbers, mostly huge: they do not count.)"""
        with self.sessions() as db:
            highest = db.scalar(
                select(func.max(DealVerdict.deal)).where(
                    DealVerdict.game == slug, DealVerdict.certified
                )
            )
        return (highest or 0) + 1

    def _decided(self, slug: str, number: int) -> Verdict | None:
        """A stored decided verdict (e.g. found when a game of the deal ended)."""
        with self.sessions() as db:
            row = db.get(DealVerdict, (slug, number))
            if row is None or row.outcome == Outcome.UNKNOWN.value:
                return None
            moves = tuple(Move.parse(m) for m in (row.solution or "").split())
            return Verdict(slug, number, Outcome(row.outcome), moves, row.positions)

    def certify(
        self,
        slug: str,
        count: int,
        *,
        nodes: int = CERTIFY_NODES,
        seconds: float = CERTIFY_SECONDS,
        max_deals: int | None = None,
        max_seconds: float | None = None,
        progress: Callable[[int, int, Verdict | None], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> int:
        """Judge deals until the pool of ``slug`` holds ``count`` certified winnable deals, or
        ``max_deals`` deals have been judged in this run (default: 20 per deal wanted), or
        ``max_seconds`` have passed: it always ends (Quadruple Interchange's solver decides
        few deals, so its pool may stay short of ``count``).

        Every verdict is stored as soon as it is found, so an interrupted run resumes where it
        stopped. Returns the pool's size.
        """
        if slug not in GAMES:
            raise InvalidRequest("There is no game called %(game)s.", game=repr(slug))
        limit = max_deals if max_deals is not None else max(20 * count, 100)
        ends = None if max_seconds is None else clock() + max_seconds
        have = self.pool_size(slug)
        if progress:
            progress(have, count, None)
        number = self.next_candidate(slug)
        judged = 0
        while have < count and judged < limit and (ends is None or clock() < ends):
            left = seconds if ends is None else max(0.1, min(seconds, ends - clock()))
            verdict = self._decided(slug, number) or judge_deal(
                slug, number, self.deal_key, nodes, left
            )
            self.store(verdict, certified=True)
            number += 1
            judged += 1
            have += verdict.outcome is Outcome.WINNABLE
            if progress:
                progress(have, count, verdict)
        return have

    def certified_games(self) -> frozenset[str]:
        """The games whose pool holds a certified deal, read at most every ``POOLS_SECONDS``
        (the home page asks on every visit). A pool only grows (an operator's ``certify``), so
        a page may offer a new pool a little late, never one that is gone. With the database
        away this is what was last read (at first: none), so the home page still opens."""
        seen = self._pools
        if seen is not None and time.monotonic() - seen[0] < POOLS_SECONDS:
            return seen[1]
        try:
            with self.sessions() as db:
                games = frozenset(
                    db.scalars(select(DealVerdict.game).where(DealVerdict.certified).distinct())
                )
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            log.warning("certified pools not read: %s", summary(exc))
            return seen[1] if seen is not None else frozenset()
        self._pools = (time.monotonic(), games)
        return games

    def start_winnable(self, player_id: str, slug: str) -> GameView:
        """A casual game of a deal drawn from the certified pool, never one of a deal the
        caller has a game of already (in play, or finished: contract v3)."""
        try:
            get_ruleset(slug)
        except UnknownGame as exc:
            raise InvalidRequest.of(exc.words) from None
        mine = select(Game.deal).where(Game.player_id == player_id, Game.game == slug)
        # Deals of someone's own in a competition (app/services/pool.py) are never dealt again.
        claimed = select(CompetitionDeal.deal).where(CompetitionDeal.game == slug)
        with self.sessions() as db:
            pool = self.pool_size(slug)
            deals = db.scalars(
                select(DealVerdict.deal).where(
                    DealVerdict.game == slug,
                    DealVerdict.certified,
                    DealVerdict.deal.not_in(mine),
                    DealVerdict.deal.not_in(claimed),
                )
            ).all()
        name = GAMES[slug].name
        if not pool and slug == "quadruple-interchange":
            raise NoCertifiedDeals(
                "No %(name)s deal has been certified winnable yet: the solver rarely decides a "
                "Quadruple Interchange deal within its budget, so this pool is empty until an "
                "operator certifies some (an operator runs: python -m app.cli certify --game "
                "%(slug)s --count N).",
                name=name,
                slug=slug,
            )
        if not pool:
            raise NoCertifiedDeals(
                "No %(name)s deal has been certified winnable yet (an operator runs: "
                "python -m app.cli certify --game %(slug)s --count N).",
                name=name,
                slug=slug,
            )
        if not deals:
            raise NoCertifiedDealsLeft(
                "You have played every %(name)s deal certified winnable so far (%(pool)s); "
                "more are certified by an operator.",
                name=name,
                pool=pool,
            )
        return self.games.start(player_id, slug, self._rng.choice(deals))
