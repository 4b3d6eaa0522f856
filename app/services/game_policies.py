"""The policies of the actions that change a game: what a move, an undo and a resignation
check and change on the locked game row (app/services/game_actions.py runs them on its
lock → check → change → write skeleton), and the bookkeeping they share (the clock of active
time, the version and status, a race's events).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from app.db.game_rows import GameRow, NewEvent
from app.db.models import as_utc
from app.db.move_store import MoveTransaction
from app.engine import IllegalMove, InvalidMove, Move, Status, Step, get_ruleset
from app.services import stats
from app.services.errors import (
    GameOver,
    IllegalMoveError,
    InvalidRequest,
    NotInChallenge,
    RaceNotStarted,
    StaleVersion,
    UndoUnavailable,
)
from app.services.game_base import GameBase, status_of
from app.services.game_views import GameView
from app.services.rooms import events as race_events
from app.services.state_texts import STATES


@dataclass
class Change:
    """What an action's policy did to the locked row (changed in place): the view to answer
    with and the words of the move-log entry."""

    view: GameView
    stamp: datetime
    notation: str | None = None
    revealed: bool = False
    snapshot: str | None = None  # the state, stored every SNAPSHOT_EVERY moves in force
    # A race's progress event, inserted by the move's own write (one round trip).
    progress: NewEvent | None = None
    events: list[int] = field(default_factory=list)  # race events already written
    ended: bool = False  # the game ended: the listeners hear of it after the commit


def _stale(record: GameRow, version: int | None) -> StaleVersion:
    return StaleVersion(
        "The board has changed since you saw it (version %(version)s, now %(now)s); here is "
        "the current board.",
        version=version,
        now=record.version,
    )


class GamePolicies(GameBase):
    """The three policies and their checks, on the state ``GameBase`` holds."""

    # -- the policies ----------------------------------------------------------------------

    def _moved(
        self, tx: MoveTransaction, record: GameRow, name: str, move: Move, version: int
    ) -> Change:
        self._check_playable(record, version)
        stamp = self.stamps()
        if record.not_before is not None and stamp < record.not_before:
            raise RaceNotStarted("The race has not started yet: wait for the countdown.")
        rules = get_ruleset(record.game)
        try:
            step = rules.step(STATES.loads(record.state), move)
        except IllegalMove as exc:
            raise IllegalMoveError.of(exc.words) from None
        except InvalidMove as exc:
            raise InvalidRequest.of(exc.words) from None
        legal = rules.legal_moves(step.after)
        record.state = STATES.dumps(step.after)
        record.moves += 1
        record.can_undo = not step.revealed
        self._tick(record, stamp)
        record.first_move_at = record.first_move_at or stamp
        status = status_of(rules, step.after, legal, record.can_undo)
        if status == Status.PLAYING and record.moves >= self.max_moves:
            status, legal = Status.LOST, []  # the move cap ends the game (README)
        self._advance(record, status, stamp)
        if record.status != Status.PLAYING:
            stats.count_finished(tx.db, record, stamp)
        view = self._new_view(record, name, rules, step.after, legal, step=step)
        change = Change(view, stamp, str(move), step.revealed, ended=view.finished)
        if record.race_id is not None:
            on_foundations = rules.on_foundations(step.after)
            if record.status == Status.PLAYING:  # the common case: written with the move
                change.progress = race_events.progress_event(
                    tx.db, record, name, on_foundations, stamp
                )
            else:
                change.events = race_events.after_race_step(
                    tx.db, record, name, on_foundations, stamp
                )
        if view.finished:  # after the race's end is written: the last racer's race is over
            self._unseal(
                tx.db,
                view,
                lambda: [*self.log.notations(tx.db, record.id), str(move)],
                analysed=False,
            )
        return change

    def _undone(
        self, tx: MoveTransaction, record: GameRow, name: str, version: int | None
    ) -> Change:
        if version is not None and version != record.version:
            raise _stale(record, version)
        if record.status != Status.PLAYING:
            raise UndoUnavailable("The game is over: there is nothing left to undo.")
        if record.competition is not None:
            raise NotInChallenge("undo")
        rules = get_ruleset(record.game)
        active = self.log.active_entries(tx.db, record.id)
        if not active:
            raise UndoUnavailable("There is no move to undo.")
        if active[-1].revealed:
            raise UndoUnavailable(
                "That move turned up a card you had not seen, so it cannot be undone."
            )
        kept = active[:-1]
        before = STATES.loads(record.state)
        state = self.log.state_at(tx.db, record, active, len(kept))
        stamp = self.stamps()
        record.state = STATES.dumps(state)
        record.undos += 1
        record.can_undo = bool(kept) and not kept[-1].revealed
        self._tick(record, stamp)
        self._advance(record, Status.PLAYING, stamp)
        changed = tuple(
            pid for pid, a, b in zip(rules.pile_ids, before.piles, state.piles) if a != b
        )
        undo_step = Step(before, Move.parse(active[-1].notation), state, False, changed)
        legal = rules.legal_moves(state)
        view = self._new_view(record, name, rules, state, legal, step=undo_step)
        events = self._race_events(tx, record, name, rules.on_foundations(state), stamp)
        return Change(view, stamp, events=events)

    def _resigned(
        self, tx: MoveTransaction, record: GameRow, name: str, version: int | None
    ) -> Change:
        if record.status != Status.PLAYING:
            raise GameOver("The game is already over.")
        if version is not None and version != record.version:
            raise _stale(record, version)
        stamp = self.stamps()
        self._tick(record, stamp)
        self._advance(record, Status.LOST, stamp)
        stats.count_finished(tx.db, record, stamp)
        on_foundations = get_ruleset(record.game).on_foundations(STATES.loads(record.state))
        events = self._race_events(tx, record, name, on_foundations, stamp)
        return Change(self._view(tx.db, record, name), stamp, events=events, ended=True)

    # -- checks and bookkeeping ------------------------------------------------------------

    @staticmethod
    def _race_events(
        tx: MoveTransaction, record: GameRow, name: str, foundation_cards: int, stamp: datetime
    ) -> list[int]:
        if record.race_id is None:
            return []
        return race_events.after_race_step(tx.db, record, name, foundation_cards, stamp)

    def _check_playable(self, record: GameRow, version: int) -> None:
        if record.status != Status.PLAYING:
            if record.moves >= self.max_moves:
                raise GameOver(
                    "The game is over: it reached the limit of %(most)s moves and counts as lost.",
                    most=self.max_moves,
                )
            raise GameOver("The game is over (%(status)s).", status=record.status)
        if version != record.version:
            raise _stale(record, version)

    def _tick(self, record: GameRow, stamp: datetime) -> None:
        """Adds the pause since the game's last action to its active time, up to the idle cap;
        nothing before the first move. Computed here and written by the action's own UPDATE:
        no extra statement on the move path."""
        if record.first_move_at is None:
            return
        last = as_utc(record.updated_at)
        assert last is not None
        pause = int((stamp - last).total_seconds() * 1000)
        record.active_ms += max(0, min(pause, self.idle_cap_ms))

    @staticmethod
    def _advance(record: GameRow, status: str, stamp: datetime) -> None:
        record.version += 1
        record.status = status
        record.updated_at = stamp
        if status != Status.PLAYING:
            record.finished_at = stamp
            if record.first_move_at is not None:
                # What records compare: the active time, not the time since the first move.
                record.duration_ms = record.active_ms
