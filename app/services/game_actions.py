"""The actions that change a game — a move, an undo, a resignation — on one skeleton.

Every action is one short transaction of the move store (app/db/move_store.py): lock the game
row (``SELECT … FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), answer a retried
Idempotency-Key with its first answer, let the action's policy check and change the locked row,
write the row with ``version + 1`` and its move-log entry, commit; then, outside the
transaction, publish the race events it wrote and tell the listeners that a game ended.
:meth:`GameActions._act` is that skeleton; ``_moved``, ``_undone`` and ``_resigned`` are the
policies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from anyio import to_thread

from app.db.faults import OutcomeUnknown, is_disconnect, summary
from app.db.game_rows import FirstAnswer, GameRow, NewEvent, game_values, move_values
from app.db.models import as_utc
from app.db.move_store import MoveTransaction, Transactions
from app.engine import IllegalMove, InvalidMove, Move, Status, Step, dumps, get_ruleset, loads
from app.metrics import DB_ERRORS
from app.services import stats
from app.services.errors import (
    GameOver,
    IdempotencyKeyReused,
    IllegalMoveError,
    InvalidRequest,
    NotFound,
    NotInChallenge,
    RaceNotStarted,
    StaleVersion,
    Unavailable,
    UndoUnavailable,
)
from app.services.game_base import GameBase, status_of
from app.services.game_views import GameView, MoveOutcome, plausible_id
from app.services.move_log import SNAPSHOT_EVERY
from app.services.rooms import events as race_events

MAX_IDEMPOTENCY_KEY = 100
logger = logging.getLogger("patience_hall.games")


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


@dataclass
class Acted:
    """A committed action: its answer, and what is left to do after the commit (publish the
    race events it wrote, tell the listeners that the game ended)."""

    outcome: MoveOutcome
    events: list[int] = field(default_factory=list)
    ended: GameRow | None = None

    @property
    def pending(self) -> bool:
        return bool(self.events) or self.ended is not None


Policy = Callable[[MoveTransaction, GameRow, str], Change]


def _check_key(key: str | None) -> None:
    if key is not None and not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY:
        raise InvalidRequest(
            "An Idempotency-Key has 1 to %(max)s characters.", max=MAX_IDEMPOTENCY_KEY
        )


def _first_answer(
    first: FirstAnswer, action: str, notation: str | None, version: int | None
) -> str:
    """The first answer to a retried request, or IdempotencyKeyReused for another request."""
    if not first.same_request(action, notation, version) or first.response is None:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used for a different request on this game; "
            "use a new key for a new request."
        )
    return first.response


def _stale(record: GameRow, version: int | None) -> StaleVersion:
    return StaleVersion(
        "The board has changed since you saw it (version %(version)s, now %(now)s); here is "
        "the current board.",
        version=version,
        now=record.version,
    )


class GameActions(GameBase):
    """Move, undo and resign: each a policy on one lock → check → change → write skeleton.

    Each comes twice: ``move`` for a caller in a thread, and ``move_async`` for the event loop,
    which runs the very same code on the move store's connections of the loop
    (app/db/move_store.py, ``InlineMoves``) without a thread, or in the thread pool where the
    loop has none (SQLite). The skeleton takes the transactions to run on as its argument.
    """

    def move(
        self,
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """Plays one move (None: the Deal button's move, decided on the locked state)."""
        return self._after(
            self._move(self.store.transaction, game_id, player_id, move, version, idempotency_key)
        )

    async def move_async(
        self,
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """:meth:`move`, awaited on the event loop."""
        work = partial(
            self._move, game_id=game_id, player_id=player_id, move=move, version=version,
            key=idempotency_key,
        )  # fmt: skip
        return await self._on_loop(work)

    async def undo_async(
        self,
        game_id: str,
        player_id: str | None,
        version: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """:meth:`undo`, awaited on the event loop."""
        return await self._on_loop(
            partial(self._plain, "undo", self._undone, game_id, player_id, version, idempotency_key)
        )

    async def resign_async(
        self,
        game_id: str,
        player_id: str | None,
        version: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """:meth:`resign`, awaited on the event loop."""
        return await self._on_loop(
            partial(
                self._plain, "resign", self._resigned, game_id, player_id, version, idempotency_key
            )
        )

    async def _on_loop(self, work: Callable[[Transactions], Acted]) -> MoveOutcome:
        inline = self.store.inline_here()
        if inline is None:  # no connections of this loop (SQLite): the thread pool, as before

            def in_thread() -> MoveOutcome:
                return self._after(work(self.store.transaction))

            return await to_thread.run_sync(in_thread)
        acted = await inline.run(work)
        if acted.pending:
            # Rare (a race's step, a game's end), and they may block: a NOTIFY, a queued job,
            # an event's standings.
            return await to_thread.run_sync(self._after, acted)
        return acted.outcome

    def _after(self, acted: Acted) -> MoveOutcome:
        """What follows an action's commit, outside its transaction."""
        if acted.events:
            self.publish(acted.events)
        record = acted.ended
        if record is not None:
            self.ended(record.game, record.deal)
            if record.competition is not None:
                self.competition_ended(record.id)
        return acted.outcome

    def _move(
        self,
        transactions: Transactions,
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        key: str | None,
    ) -> Acted:
        _check_key(key)
        if not plausible_id(game_id):
            raise NotFound("There is no game with that id.")
        for attempt in (1, 2):
            try:
                return self._move_once(transactions, game_id, player_id, move, version, key)
            except OutcomeUnknown as exc:
                logger.warning("move outcome unknown, game %s: %s", game_id, summary(exc))
                raise Unavailable(
                    "The connection to the database was lost while your move was being saved. "
                    "Send it again with the same Idempotency-Key: it will be applied once."
                ) from None
            except Exception as exc:
                if attempt == 2 or not is_disconnect(exc):
                    raise
                # Nothing was applied (the COMMIT was never sent): once more, on a new
                # connection.
                DB_ERRORS.labels("move_retried").inc()
                logger.warning(
                    "move retried on a new connection, game %s: %s", game_id, summary(exc)
                )
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _move_once(
        self,
        transactions: Transactions,
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        key: str | None,
    ) -> Acted:
        chosen: list[Move] = []

        def notation(record: GameRow) -> str:
            # The Deal button's move (None) is a redeal when one is due, else a deal.
            rules = get_ruleset(record.game)
            chosen.append(move if move is not None else rules.deal_move(loads(record.state)))
            return str(chosen[0])

        def policy(tx: MoveTransaction, record: GameRow, name: str) -> Change:
            return self._moved(tx, record, name, chosen[0], version)

        return self._act(transactions, game_id, player_id, key, "move", version, policy, notation)

    def undo(
        self,
        game_id: str,
        player_id: str | None,
        version: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """Takes back the latest move (if it revealed nothing). With ``version``, only when it
        is the current version (else StaleVersion); with a key, once (retries replay)."""
        return self._after(
            self._plain(
                "undo", self._undone, game_id, player_id, version, idempotency_key,
                self.store.transaction,
            )
        )  # fmt: skip

    def resign(
        self,
        game_id: str,
        player_id: str | None,
        version: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """Ends the game as lost; ``version`` and the key as for :meth:`undo`."""
        return self._after(
            self._plain(
                "resign", self._resigned, game_id, player_id, version, idempotency_key,
                self.store.transaction,
            )
        )  # fmt: skip

    def _plain(
        self,
        action: str,
        policy: Callable[[MoveTransaction, GameRow, str, int | None], Change],
        game_id: str,
        player_id: str | None,
        version: int | None,
        key: str | None,
        transactions: Transactions,
    ) -> Acted:
        """An action with no move of its own (undo, resign) on the skeleton."""
        _check_key(key)

        def bound(tx: MoveTransaction, record: GameRow, name: str) -> Change:
            return policy(tx, record, name, version)

        return self._act(transactions, game_id, player_id, key, action, version, bound)

    # -- the skeleton ----------------------------------------------------------------------

    def _act(
        self,
        transactions: Transactions,
        game_id: str,
        player_id: str | None,
        key: str | None,
        action: str,
        version: int | None,
        policy: Policy,
        notation: Callable[[GameRow], str | None] = lambda record: None,
    ) -> Acted:
        with transactions() as tx:
            locked = tx.lock(game_id, key) if plausible_id(game_id) else None
            if locked is None:
                raise NotFound("There is no game with that id.")
            record, name = locked.row, locked.player_name
            self._check_owner(record, player_id)
            said = notation(record)
            if locked.first is not None:
                answer = _first_answer(locked.first, action, said, version)
                return Acted(MoveOutcome(self._view(tx.db, record, name), answer))
            change = policy(tx, record, name)
            in_force = record.moves - record.undos  # each undo took back one move
            stored = self.answer_json(change.view) if key else None
            written = tx.write(
                game_values(record),
                move_values(
                    record,
                    action,
                    change.stamp,
                    notation=change.notation,
                    revealed=change.revealed,
                    idempotency_key=key,
                    response=stored,
                    snapshot=record.state
                    if action == "move" and in_force % SNAPSHOT_EVERY == 0
                    else None,
                ),
                change.progress,
            )
        events = [*change.events, *([] if written is None else [written])]
        outcome = MoveOutcome(change.view, stored=stored)
        return Acted(outcome, events, record if change.ended else None)

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
            step = rules.step(loads(record.state), move)
        except IllegalMove as exc:
            raise IllegalMoveError.of(exc.words) from None
        except InvalidMove as exc:
            raise InvalidRequest.of(exc.words) from None
        legal = rules.legal_moves(step.after)
        record.state = dumps(step.after)
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
            self._unseal(tx.db, view, lambda: [*self.log.notations(tx.db, record.id), str(move)])
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
        before = loads(record.state)
        state = self.log.state_at(tx.db, record, active, len(kept))
        stamp = self.stamps()
        record.state = dumps(state)
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
        on_foundations = get_ruleset(record.game).on_foundations(loads(record.state))
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
