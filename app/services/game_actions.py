"""The actions that change a game — a move, an undo, a resignation — on one skeleton.

Every action is one short transaction of the move store (app/db/move_store.py): lock the game
row (``SELECT … FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), answer a retried
Idempotency-Key with its first answer, let the action's policy check and change the locked row,
write the row with ``version + 1`` and its move-log entry, commit; then, outside the
transaction, publish the race events it wrote and tell the listeners that a game ended.
:meth:`GameActions._act` is that skeleton; ``_moved``, ``_undone`` and ``_resigned`` are the
policies (app/services/game_policies.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from anyio import to_thread

from app.db.faults import OutcomeUnknown, is_disconnect, summary
from app.db.game_rows import FirstAnswer, GameRow, game_values, move_values
from app.db.move_store import MoveTransaction, Transactions
from app.engine import Move, get_ruleset, loads
from app.metrics import DB_ERRORS
from app.services.errors import (
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    Unavailable,
)
from app.services.game_policies import Change, GamePolicies
from app.services.game_views import MoveOutcome, plausible_id
from app.services.move_log import SNAPSHOT_EVERY

MAX_IDEMPOTENCY_KEY = 100
logger = logging.getLogger("patience_hall.games")


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


class GameActions(GamePolicies):
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
