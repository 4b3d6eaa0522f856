"""The solver as a service: hints, the solver's verdicts on deals, and the certified pool.

Searches run in worker processes (``SolverPool``, app/services/solver_pool.py; what they run
is app/services/solver_jobs.py), each within a budget of positions and (unless
``time_limits`` is off) a time budget that the worker checks through the clock the service
hands the pure solver; the web layer awaits them without
blocking the event loop or the threads that play moves, so a slow search never delays a move.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

from anyio import to_thread
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db.faults import is_unavailable, summary
from app.db.models import CompetitionDeal, DealVerdict, Game, GameCoach, GameHint
from app.engine import GAMES, Move, UnknownGame, Words, get_ruleset, loads
from app.services import stats
from app.services.errors import (
    N_,
    Forbidden,
    GameOver,
    HintsOffInRaces,
    InvalidRequest,
    NoCertifiedDeals,
    NoCertifiedDealsLeft,
    NoSlip,
    NotFound,
    NotInChallenge,
)
from app.services.game_views import GameView, plausible_id
from app.services.games import Games
from app.services.hint_views import HintView
from app.services.players import now
from app.services.solver_jobs import (
    ANALYSIS_JOB_SECONDS,
    ANALYSIS_NODES,
    ANALYSIS_POLL_SECONDS,
    BUSY_SLACK_SECONDS,
    CERTIFY_NODES,
    CERTIFY_SECONDS,
    HINT_NODES,
    JUDGE_NODES,
    POOLS_SECONDS,
    QUICK_ESTIMATE_NODES,
    QUICK_ESTIMATE_SAMPLES,
    Verdict,
    analysis_job,
    hint_job,
    judge_deal,
    lost_deal_analysis,
    undecided_analysis,
)
from app.services.solver_pool import CpuShare, SolverPool
from app.solver import Outcome, follow
from app.solver.hints import fully_visible

T = TypeVar("T")
log = logging.getLogger(__name__)


def _par(verdict: Verdict) -> int | None:
    """A winnable deal's par: the length of the (shortened) winning line the solver found."""
    return len(verdict.solution) if verdict.outcome is Outcome.WINNABLE else None


@dataclass
class Solver:
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

    # -- hints ------------------------------------------------------------------------------

    def hint_position(self, game_id: str, player_id: str) -> tuple[str, int]:
        """The stored state and version of the caller's game in play (owner only)."""
        view = self._own_game(game_id, player_id)
        if view.finished:
            raise GameOver("The game is over: there is nothing left to hint.")
        if view.record.competition is not None:
            raise NotInChallenge("hints")
        if view.record.race_id is not None:
            raise HintsOffInRaces(
                "Hints are off in races: every racer plays the deal on their own."
            )
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

    async def hint(self, game_id: str, player_id: str) -> HintView:
        """A hint for the caller's game in play: the next move of the winning line kept with
        the game while the player is on it (no search), else a search in a worker; a new
        exact winning line found is kept (``GameCoach``), so following hints wins."""
        state_text, version = await to_thread.run_sync(self.hint_position, game_id, player_id)
        given = await to_thread.run_sync(self.kept_line, game_id, state_text)
        if given is None:
            answer = await self.pool.run(
                self._wait(self.hint_seconds),
                hint_job,
                state_text,
                self._budget(self.hint_seconds),
                self.hint_nodes,
            )
            given = None if answer is None else HintView.of(answer)
            if given is not None and given.line:
                await to_thread.run_sync(self.keep_line, game_id, state_text, given.line)
        if given is None and not fully_visible(loads(state_text)):
            given = HintView.of(
                await to_thread.run_sync(
                    hint_job,
                    state_text,
                    self._budget(1.0),
                    QUICK_ESTIMATE_NODES,
                    QUICK_ESTIMATE_SAMPLES,
                )
            )
            # Said in the player's language by the web: the prefix, then the estimate's words
            # (or its fixed message, a catalog message of its own).
            busy = Words("busy_estimate", N_("The solver is busy: a quick estimate."))
            given.words = [busy, *(given.words or [Words("hint", given.message)])]
            given.message = f"{busy} {given.message}"
        if given is None:
            given = HintView(
                None,
                Outcome.UNKNOWN.value,
                False,
                N_("The solver is busy: no hint this time. Try again in a moment."),
            )
            given.hints_used = await to_thread.run_sync(self.hints_used, game_id)
        else:
            given.hints_used = await to_thread.run_sync(self.record_hint, game_id)
        given.version = version
        return given

    def kept_line(self, game_id: str, state_text: str) -> HintView | None:
        """The hint from the winning line kept with the game, if the position is on it."""
        with self.sessions() as db:
            row = db.get(GameCoach, game_id)
            if row is None or not row.line or not row.line_start:
                return None
            start, line_text = row.line_start, row.line
        try:
            rest = follow(
                loads(start), [Move.parse(m) for m in line_text.split()], loads(state_text)
            )
        except ValueError:  # a line kept by an older engine that no longer reads: search again
            return None
        if not rest:
            return None
        return HintView(
            rest[0],
            Outcome.WINNABLE.value,
            True,
            N_("This position can be won: try this move (the winning line continues)."),
        )

    def keep_line(self, game_id: str, state_text: str, line: list[str]) -> None:
        """Keeps a winning line found from ``state_text`` with the game (replacing the last)."""
        with suppress(IntegrityError), self.sessions.begin() as db:
            row = db.get(GameCoach, game_id, with_for_update=True)
            if row is None:
                row = GameCoach(game_id=game_id, updated_at=now())
                db.add(row)
            row.line_start, row.line, row.updated_at = state_text, " ".join(line), now()

    # -- analysis of finished games -------------------------------------------------------

    async def analysis(self, game_id: str, viewer: str | None) -> dict[str, Any]:
        """Where a finished game slipped (contract v3, "analysis"): for whoever may see the
        game's solution (``Games.analysis_source``: the same gate, so the seal applies too).
        A decided answer is stored with the game; an undecided one is searched again next
        time (the machine may be quieter)."""
        slug, number, moves = await to_thread.run_sync(self.games.analysis_source, game_id, viewer)
        stored = await to_thread.run_sync(self.stored_analysis, game_id)
        if stored is not None:
            return stored
        if self.analyse_later is not None:
            try:
                await to_thread.run_sync(self.analyse_later, game_id, slug, number, moves)
            except Exception as exc:  # the queue is out of reach: searched here instead
                log.warning("queueing the analysis of game %s failed: %s", game_id, summary(exc))
            else:
                return await self._analysis_of_a_worker(game_id, slug, number)
        known = await to_thread.run_sync(self.verdict, slug, number)
        if known is False:  # a deal proved lost needs no search: no move of the game lost it
            await to_thread.run_sync(self.store_analysis, game_id, lost_deal_analysis())
            return lost_deal_analysis()
        outcome = None if known is None else "winnable"
        answer: dict[str, Any] | None = await self.pool.run(
            self._wait(self.analysis_seconds),
            analysis_job,
            slug,
            number,
            self.deal_key,
            moves,
            outcome,
            self._budget(self.analysis_seconds),
            self.analysis_nodes,
        )
        if answer is None:
            return undecided_analysis()
        if answer["decided"]:
            await to_thread.run_sync(self.store_analysis, game_id, answer)
        return answer

    async def _analysis_of_a_worker(self, game_id: str, slug: str, number: int) -> dict[str, Any]:
        """The analysis a solver worker stores (app/jobs ``analyse``), once it has; undecided
        if it has not within ``analysis_wait_seconds`` (the job goes on: the next request
        finds its answer)."""
        deadline = time.monotonic() + self.analysis_wait_seconds
        while True:
            stored = await to_thread.run_sync(self.stored_analysis, game_id)
            if stored is not None:
                return stored
            if time.monotonic() >= deadline:
                return undecided_analysis()
            await asyncio.sleep(ANALYSIS_POLL_SECONDS)

    def analyse_now(self, game_id: str, slug: str, number: int, moves: list[str]) -> bool:
        """A solver worker's ``analyse`` job: the analysis of a finished game, in this process
        (``ANALYSIS_JOB_SECONDS``), stored with the game when decided. Returns whether it is."""
        if self.stored_analysis(game_id) is not None:
            return True
        known = self.verdict(slug, number)
        outcome = None if known is None else ("winnable" if known else "lost")
        answer = analysis_job(
            slug,
            number,
            self.deal_key,
            moves,
            outcome,
            self._budget(ANALYSIS_JOB_SECONDS),
            self.analysis_nodes,
        )
        if answer["decided"]:
            self.store_analysis(game_id, answer)
        return bool(answer["decided"])

    def stored_analysis(self, game_id: str) -> dict[str, Any] | None:
        with self.sessions() as db:
            text = db.scalar(select(GameCoach.analysis).where(GameCoach.game_id == game_id))
        if text is None:
            return None
        found: dict[str, Any] = json.loads(text)
        return found

    def store_analysis(self, game_id: str, answer: dict[str, Any]) -> None:
        with suppress(IntegrityError), self.sessions.begin() as db:
            row = db.get(GameCoach, game_id, with_for_update=True)
            if row is None:
                row = GameCoach(game_id=game_id, updated_at=now())
                db.add(row)
            row.analysis, row.updated_at = json.dumps(answer), now()

    async def try_again(self, game_id: str, viewer: str) -> GameView:
        """ "Try again from here": a new casual game of the finished game's deal for the caller,
        replayed (as ordinary logged moves) to just before the slip its analysis names."""
        found = await self.analysis(game_id, viewer)
        slip = found.get("slip")
        if not slip:
            raise NoSlip(
                "The analysis names no slip in this game (it was won, the deal could not be "
                "won, or the solver has not decided yet): start the deal afresh instead."
            )
        slug, number, moves = await to_thread.run_sync(self.games.analysis_source, game_id, viewer)
        return await to_thread.run_sync(
            self._replayed_game, viewer, slug, number, moves[: int(slip["ply"]) - 1]
        )

    def slip_words(
        self, game_id: str, viewer: str | None, ply: int, better: str
    ) -> tuple[Words, Words]:
        """The slip's move and the better move, as words (through the same gate): the web says
        them in the player's language."""
        slug, number, moves = self.games.analysis_source(game_id, viewer)
        if not 1 <= ply <= len(moves):
            raise InvalidRequest("That move is not in the game.")
        rules = get_ruleset(slug)
        before = rules.replay(
            rules.deal(number, self.deal_key), [Move.parse(m) for m in moves[: ply - 1]]
        )
        played = rules.replay_words_of(before, [moves[ply - 1]])[0]
        instead = rules.replay_words_of(before, [better])[0]
        return played, instead

    def _replayed_game(self, player_id: str, slug: str, number: int, moves: list[str]) -> GameView:
        view = self.games.start(player_id, slug, number)
        game_id = view.record.id
        version = view.record.version
        for text in moves:
            version = self.games.move(
                game_id, player_id, Move.parse(text), version
            ).view.record.version
        return self.games.get(game_id, player_id)

    def _own_game(self, game_id: str, player_id: str) -> GameView:
        if not plausible_id(game_id):
            raise NotFound("There is no game with that id.")
        view = self.games.get(game_id, player_id)
        if view.record.player_id != player_id:
            raise Forbidden("This game belongs to another player.")
        return view

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
