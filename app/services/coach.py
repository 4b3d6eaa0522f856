"""The coach: hints that lead somewhere (a winning line kept with the game and continued while
the player is on it; estimates when cards are hidden) and the analysis of a finished game (where
it slipped, and "try again from here"). Searches run in the solver's worker pool."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from contextlib import suppress
from typing import Any

from anyio import to_thread
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.db.faults import summary
from app.db.models import Game, GameCoach, GameHint
from app.engine import Move, Words, get_ruleset, loads
from app.services import stats
from app.services.errors import (
    N_,
    Forbidden,
    GameOver,
    HintsOffInRaces,
    InvalidRequest,
    NoSlip,
    NotFound,
    NotInChallenge,
)
from app.services.game_views import GameView, plausible_id
from app.services.hint_views import HintView
from app.services.players import now
from app.services.solver_base import SolverBase
from app.services.solver_jobs import (
    ANALYSIS_JOB_SECONDS,
    ANALYSIS_POLL_SECONDS,
    QUICK_ESTIMATE_NODES,
    QUICK_ESTIMATE_SAMPLES,
    analysis_job,
    hint_job,
    lost_deal_analysis,
    undecided_analysis,
)
from app.services.verdicts import deal_winnable
from app.solver import Outcome, follow
from app.solver.sampling import fully_visible

log = logging.getLogger("app.services.solver")


class Coach(SolverBase):
    """Hints and analyses (contract v3, "Hints that lead somewhere, and analysis")."""

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

    def judged_verdict(self, game_id: str) -> bool | None:
        """The solver's own verdict on the game's deal (None: not judged, or undecided); a
        winnable one comes with its winning line from the deal's start."""
        with self.sessions() as db:
            found = db.execute(select(Game.game, Game.deal).where(Game.id == game_id)).first()
            return None if found is None else deal_winnable(db, found.game, found.deal)

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
