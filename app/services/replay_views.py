"""Finished games shown whole: a replay at any step, the solver's winning line, the moves an
analysis reads, and the stored state checked against its move log."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.db.game_rows import GameRow
from app.engine import Move, State, Status, get_ruleset, loads
from app.services import same_deal
from app.services.errors import N_, DealNotFinished, GameInPlay, NotFound
from app.services.game_base import GameBase
from app.services.game_views import ReplayView
from app.services.seal import check_race_read, opened_to_all, refusal
from app.services.verdicts import deal_solution


class Replays(GameBase):
    """Reading finished games move by move, under the same-deal rule and the seal."""

    def replay_view(self, game_id: str, step: int | None, viewer: str | None) -> ReplayView:
        """A finished game at any step of its move log, every card shown: for its owner and
        for players who have finished a game of its deal (the same-deal rule)."""
        with self.sessions() as db:
            record, name = self._finished_for(db, game_id, viewer, N_("A replay"))
            entries = self.log.finished_entries(db, game_id)
            moves = [e.notation for e in entries]
            at = len(moves) if step is None else max(0, min(step, len(moves)))
            state = self.log.finished_state_at(db, record, entries, at)
        rules = get_ruleset(record.game)
        start = rules.deal(record.deal, self.deal_key)
        view = self._new_view(record, name, rules, state, [], log=moves)
        return ReplayView(view, moves, at, start)

    def solution_view(self, game_id: str, step: int | None, viewer: str | None) -> ReplayView:
        """The solver's winning line for a finished game's deal, as a replay from the deal:
        shown to whoever may see that game's replay (its owner, and players who have finished
        the deal: the same-deal rule), and only when the solver found the deal winnable."""
        with self.sessions() as db:
            record, name = self._finished_for(db, game_id, viewer, N_("The solver's solution"))
            moves = deal_solution(db, record.game, record.deal)
        if not moves:
            raise NotFound("The solver has no winning line for this deal.")
        rules = get_ruleset(record.game)
        start = rules.deal(record.deal, self.deal_key)
        at = len(moves) if step is None else max(0, min(step, len(moves)))
        state = rules.replay(start, [Move.parse(m) for m in moves[:at]])
        view = self._new_view(record, name, rules, state, [], log=moves, deal_winnable=True)
        return ReplayView(view, moves, at, start)

    def analysis_source(self, game_id: str, viewer: str | None) -> tuple[str, int, list[str]]:
        """A finished game's deal and moves in force, for its analysis (issue #22): shown to
        whoever may see the game's solution — the same gate (``_finished_for``)."""
        with self.sessions() as db:
            record, _ = self._finished_for(db, game_id, viewer, N_("The analysis"))
            moves = [e.notation for e in self.log.finished_entries(db, game_id)]
        return record.game, record.deal, moves

    def replay(self, game_id: str) -> tuple[State, State]:
        """The stored state and the state rebuilt from the deal and the move log."""
        with self.sessions() as db:
            record, _ = self._load(db, game_id)
            rules = get_ruleset(record.game)
            moves = [Move.parse(n) for n, _ in self.log.active_moves(db, game_id)]
            return loads(record.state), rules.replay(rules.deal(record.deal, self.deal_key), moves)

    def _finished_for(
        self, db: Session, game_id: str, viewer: str | None, what: str
    ) -> tuple[GameRow, str]:
        """A finished game that ``viewer`` may see with every card shown (its owner, or a
        player who has finished its deal: the same-deal rule), or the refusal that says why."""
        record, name = self._load(db, game_id)
        check_race_read(db, record.race_id, record.player_id, viewer)
        related = same_deal.relation(db, viewer, record.game, record.deal)
        same_deal.check_may_see(record.player_id, viewer, related)
        if record.status == Status.PLAYING:
            raise GameInPlay("%(what)s is available once the game is over.", what=what)
        sealed = self.sealer.of(db, record.game, record.deal)
        if sealed is not None:
            raise refusal(sealed)
        if not same_deal.sees_everything(record.player_id, viewer, related) and not opened_to_all(
            record.competition
        ):
            raise DealNotFinished()
        return record, name
