"""Games: start, read, move, undo, resign, and replaying the move log.

Every change is one short transaction of the move store (app/db/game_rows.py) that locks the
game row (``SELECT … FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), checks the
client's version, applies the move in the engine, writes the new state with ``version + 1`` and
appends to the move log. Moves, undos and resigns share that one path.

A browser action is one call: :meth:`Games.play` (the player's move, then the auto-move
preference's cards, each an ordinary logged move), :meth:`Games.finish`, :meth:`Games.restart`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import Connection, insert, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.faults import OutcomeUnknown, is_disconnect, summary
from app.db.game_rows import (
    GAME,
    SELECT_GAME,
    FirstAnswer,
    GameRow,
    MoveStore,
    MoveTransaction,
    game_values,
    move_values,
)
from app.db.models import Game, Player, as_utc
from app.engine import (
    MAX_DEAL,
    RULES_VERSION,
    IllegalMove,
    InvalidDeal,
    InvalidMove,
    Move,
    Ruleset,
    State,
    Status,
    Step,
    UnknownGame,
    dumps,
    get_ruleset,
    loads,
)
from app.engine.deals import check_deal_number
from app.engine.seen import seen_slots, shared_faces, slot_faces
from app.metrics import DB_ERRORS
from app.services import daily, race_events, same_deal, stats
from app.services.errors import (
    N_,
    DealInPlay,
    DealNotFinished,
    DealSealed,
    Forbidden,
    GameInPlay,
    GameOver,
    IdempotencyKeyReused,
    IllegalMoveError,
    InvalidRequest,
    NotFound,
    NothingToFinish,
    NotInChallenge,
    RaceNotStarted,
    SameDealInPlay,
    ServiceError,
    StaleVersion,
    Unavailable,
    UndoUnavailable,
)
from app.services.game_views import (
    GameView,
    MoveOutcome,
    Played,
    ReplayView,
    plausible_id,
)
from app.services.move_log import SNAPSHOT_EVERY, MoveLog
from app.services.players import new_id, now
from app.services.seal import (
    Seal,
    Sealer,
    SealKind,
    check_race_read,
    opened_to_all,
    race_running,
    refusal,
)
from app.services.verdicts import deal_solution, deal_winnable

MAX_IDEMPOTENCY_KEY = 100
DEFAULT_MAX_MOVES = 2000
logger = logging.getLogger("patience_hall.games")


def _check_key(key: str | None) -> None:
    if key is not None and not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY:
        raise InvalidRequest(
            "An Idempotency-Key has 1 to %(max)s characters.", max=MAX_IDEMPOTENCY_KEY
        )


def _replay(first: FirstAnswer, action: str, notation: str | None, version: int | None) -> str:
    """The first answer to a retried request, or IdempotencyKeyReused for another request."""
    if not first.same_request(action, notation, version) or first.response is None:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used for a different request on this game; "
            "use a new key for a new request."
        )
    return first.response


def _no_answers(view: GameView) -> str:
    raise RuntimeError("Games.answer_json is not set: the app sets it (app/main.py)")


@dataclass
class Games:
    """The game use cases, bound to a database and the server's deal key."""

    sessions: sessionmaker[Session]
    deal_key: bytes
    max_moves: int = DEFAULT_MAX_MOVES  # accepted moves per game; the last one ends it as lost
    # Active time: each pause between two actions counts up to this long (IDLE_CAP_SECONDS).
    idle_cap_ms: int = 120_000
    _rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)
    # The move path's connections and transactions (app/db/game_rows.py), built by the app.
    store: MoveStore = field(kw_only=True)
    # Called with the ids of the events a change wrote, once its transaction has committed
    # (the broker of app/db/broker.py tells every process); only races' games write events.
    publish: Callable[[list[int]], None] = field(default=lambda ids: None)
    # Called with (game slug, deal number) once a game has ended and its transaction has
    # committed: the solver judges the deal then (app/services/solver.py), off the move path.
    ended: Callable[[str, int], None] = field(default=lambda game, deal: None)
    # Called with the id of a competition game (a deal of one's own) once it has ended and its
    # transaction has committed: an event's live standings (app/services/arenas.py).
    competition_ended: Callable[[str], None] = field(default=lambda game_id: None)
    # The API's JSON of a state (app/web/api/schemas.py), stored with an Idempotency-Key's log
    # entry so that a retry gets the first answer as it was sent: the answer's shape belongs
    # to the web layer, which the services do not import.
    answer_json: Callable[[GameView], str] = field(default=_no_answers)
    # The UTC date, for the deal of the day's seal (tests set another).
    today: Callable[[], date] = field(default=daily.today)
    # The time, for the seals of deals of one's own and the daily challenge (tests set another).
    clock: Callable[[], datetime] = field(default=now)
    sealer: Sealer = field(init=False)

    log: MoveLog = field(init=False)

    def __post_init__(self) -> None:
        self.sealer = Sealer(self.deal_key, lambda: self.today(), lambda: self.clock())
        self.log = MoveLog(self.deal_key)

    # -- starting and reading ------------------------------------------------------------

    def draw_deal(self) -> int:
        """A deal number drawn uniformly from 1..MAX_DEAL."""
        return self._rng.randint(1, MAX_DEAL)

    def start(self, player_id: str, slug: str, deal: int | None = None) -> GameView:
        """A new game: of a deal the server draws (rated), or of the chosen number (casual:
        anyone may have scouted a chosen deal's cards, in another game of it)."""
        try:
            rules = get_ruleset(slug)
            number = self._rng.randint(1, MAX_DEAL) if deal is None else check_deal_number(deal)
        except (UnknownGame, InvalidDeal) as exc:
            raise InvalidRequest(str(exc)) from None
        rated = deal is None
        self._end_stuck(player_id)
        state = rules.deal(number, self.deal_key)
        stamp = now()
        with self.sessions.begin() as db:
            name = db.scalar(select(Player.name).where(Player.id == player_id))
            if name is None:
                raise NotFound("No such player.")
            if not rated:
                # One unfinished game per deal: a second one would let the player see cards
                # that are still hidden in the first (a drawn number is never drawn again).
                in_play = db.scalar(
                    select(Game.id).where(
                        Game.player_id == player_id,
                        Game.game == slug,
                        Game.deal == number,
                        Game.status == Status.PLAYING,
                    )
                )
                if in_play is not None:
                    raise DealInPlay(in_play)
                self.sealer.refuse_start(db, slug, number)
            return self._deal(db, player_id, name, rules, number, state, stamp, rated=rated)

    def deal_own(self, db: Session, player_id: str, slug: str, number: int, kind: str) -> GameView:
        """A game of a deal of the player's own in a competition (``kind``: "challenge" or
        "event"), inside the caller's transaction (which claimed the deal: app/services/pool.py).
        Casual for win rates; no hints, no undo."""
        rules = get_ruleset(slug)
        name = db.scalar(select(Player.name).where(Player.id == player_id))
        if name is None:
            raise NotFound("No such player.")
        state = rules.deal(number, self.deal_key)
        return self._deal(
            db, player_id, name, rules, number, state, now(), rated=False, competition=kind
        )

    def _deal(
        self,
        db: Session,
        player_id: str,
        name: str,
        rules: Ruleset,
        number: int,
        state: State,
        stamp: datetime,
        *,
        rated: bool,
        competition: str | None = None,
    ) -> GameView:
        legal = rules.legal_moves(state)
        record = GameRow.dealt(
            new_id(),
            player_id,
            rules.slug,
            number,
            dumps(state),
            _status(rules, state, legal, False),
            stamp,
            rules=RULES_VERSION,
            rated=rated,
            competition=competition,
        )
        db.execute(insert(GAME).values(**vars(record)))
        if rated:  # it counts as played from now on: the player has seen the layout
            stats.count_dealt(db.connection(), record, stamp)
        return GameView(
            record, name, rules, state, legal, max_moves=self.max_moves,
            idle_cap_ms=self.idle_cap_ms,
        )  # fmt: skip

    def _end_stuck(self, player_id: str) -> None:
        """A game left with no legal move, only an undo, ends (as lost) when its player starts
        another game (contract v2, "No moves left"): it must not wait for ever to be counted."""
        with self.sessions() as db:
            waiting = db.execute(
                select(Game.id, Game.game, Game.state).where(
                    Game.player_id == player_id,
                    Game.status == Status.PLAYING,
                    Game.can_undo.is_(True),
                )
            ).all()
        for game_id, slug, text in waiting:
            if not get_ruleset(slug).legal_moves(loads(text)):
                with suppress(GameOver):  # it ended meanwhile (another tab)
                    self.resign(game_id, player_id)

    def get(self, game_id: str, viewer: str | None) -> GameView:
        """A game as ``viewer`` (None: nobody signed in) may see it: the same-deal rule."""
        with self.sessions() as db:
            record, name = self._load(db, game_id)
            if viewer == record.player_id:
                return self._view(db, record, name)
            check_race_read(db, record.race_id, record.player_id, viewer)
            related = same_deal.relation(db, viewer, record.game, record.deal)
            same_deal.check_may_see(record.player_id, viewer, related)
            everything = same_deal.sees_everything(record.player_id, viewer, related) or (
                opened_to_all(record.competition)
                and record.status != Status.PLAYING
                and self.sealer.of(db, record.game, record.deal) is None
            )
            return self._view(db, record, name, masked=not everything)

    # -- changing ------------------------------------------------------------------------

    def move(
        self,
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """Plays one move (None: the Deal button's move, decided on the locked state)."""
        _check_key(idempotency_key)
        if not plausible_id(game_id):
            raise NotFound("There is no game with that id.")
        for attempt in (1, 2):
            try:
                return self._move_once(game_id, player_id, move, version, idempotency_key)
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

    def play(
        self, game_id: str, player_id: str | None, move: Move | None, version: int, *, auto: bool
    ) -> Played:
        """A browser's move: the player's ``move`` (None: the Deal button), then, with the
        auto-move preference, every card that may go up by itself (``Ruleset.auto_move``),
        each an ordinary logged move of its own (rules.md §0). Refusals of the player's move
        raise as for :meth:`move`; an auto-move that another tab's move got ahead of just ends
        the run: the answer shows the board as it is."""
        first = self.move(game_id, player_id, move, version)
        view = first.view
        assert view.step is not None
        played = Played(view, [view.step])
        if not auto or view.finished:
            return played
        # The card the player just placed stays where they put it; a card dealt from the stock
        # was not placed by choice, so it may go up.
        keep = "" if view.step.move.source == "stock" else view.step.move.target
        for _ in range(view.rules.cards):
            if view.finished:
                break
            up = view.rules.auto_move(view.state, view.legal_moves, keep)
            if up is None:
                break
            try:
                view = self.move(game_id, player_id, up, view.record.version).view
            except ServiceError:
                break
            assert view.step is not None
            played.steps.append(view.step)
            played.view = view
        return played

    def finish(self, game_id: str, player_id: str | None) -> Played:
        """Auto-finish: when every card left can go up without a choice, they all go up, each
        an ordinary logged move; NothingToFinish when that is not so."""
        view = self.get(game_id, player_id)
        self._check_owner(view.record, player_id)
        plan = None if view.finished else view.rules.finish_moves(view.state, view.legal_moves)
        if not plan:
            raise NothingToFinish("Not every card left can go up by itself: play on.")
        played = Played(view, [])
        for up in plan:
            played.view = self.move(game_id, player_id, up, played.view.record.version).view
            assert played.view.step is not None
            played.steps.append(played.view.step)
        return played

    def restart(self, game_id: str, player_id: str) -> GameView:
        """The same deal from the start: the game in play is resigned (it counts as lost), then
        a new game of the same deal begins (a chosen deal, so casual)."""
        view = self.get(game_id, player_id)
        self._check_owner(view.record, player_id)
        if view.record.race_id is not None and not view.finished:
            # Restarting would quietly forfeit the race: leaving it is a resignation, said so.
            raise GameInPlay(
                "This game is part of a race that is still on: resign it to leave the race, "
                "then play the deal again."
            )
        if view.finished and view.seal is not None and view.seal.kind is SealKind.RACE:
            # A racer out of the race could otherwise deal the race's cards to itself and pass
            # them on to a racer still playing.
            raise DealSealed(
                "This deal is sealed while its race is on: play it again once the race is over."
            )
        if view.record.competition is not None and view.number_hidden:
            raise NotInChallenge("restart")  # one game a day, or the event's next deal
        if not view.finished:
            with suppress(GameOver):  # it ended meanwhile (another tab): nothing to resign
                self.resign(game_id, player_id)
        return self.start(player_id, view.record.game, view.record.deal)

    def _locked(
        self, tx: MoveTransaction, game_id: str, player_id: str | None, key: str | None
    ) -> tuple[GameRow, str, FirstAnswer | None]:
        locked = tx.lock(game_id, key) if plausible_id(game_id) else None
        if locked is None:
            raise NotFound("There is no game with that id.")
        self._check_owner(locked.row, player_id)
        return locked.row, locked.player_name, locked.first

    def _move_once(
        self,
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        idempotency_key: str | None,
    ) -> MoveOutcome:
        with self.store.transaction() as tx:
            record, name, first = self._locked(tx, game_id, player_id, idempotency_key)
            rules = get_ruleset(record.game)
            state = loads(record.state)
            if move is None:  # the Deal button: a redeal when one is due, else a deal
                move = rules.deal_move(state)
            if first is not None:
                replayed = _replay(first, "move", str(move), version)
                return MoveOutcome(self._view(tx.db, record, name), replayed)
            self._check_playable(record, version)
            if record.not_before is not None and now() < record.not_before:
                raise RaceNotStarted("The race has not started yet: wait for the countdown.")
            try:
                step = rules.step(state, move)
            except IllegalMove as exc:
                raise IllegalMoveError.of(exc.words) from None
            except InvalidMove as exc:
                refused = InvalidRequest(str(exc))
                refused.words = exc.words
                raise refused from None
            legal = rules.legal_moves(step.after)
            stamp = now()
            record.state = dumps(step.after)
            record.moves += 1
            record.can_undo = not step.revealed
            self._tick(record, stamp)
            record.first_move_at = record.first_move_at or stamp
            status = _status(rules, step.after, legal, record.can_undo)
            if status == Status.PLAYING and record.moves >= self.max_moves:
                status, legal = Status.LOST, []  # the move cap ends the game (README)
            self._advance(record, status, stamp)
            if record.status != Status.PLAYING:
                stats.count_finished(tx.db, record, stamp)
            view = GameView(
                record, name, rules, step.after, legal, step=step, max_moves=self.max_moves,
                idle_cap_ms=self.idle_cap_ms,
            )  # fmt: skip
            in_force = record.moves - record.undos  # each undo took back one move
            events: list[int] = []
            progress = None
            if record.race_id is not None:
                on_foundations = rules.on_foundations(step.after)
                if record.status == Status.PLAYING:  # the common case: written with the move
                    progress = race_events.progress_event(
                        tx.db, record, name, on_foundations, stamp
                    )
                else:
                    events = race_events.after_race_step(tx.db, record, name, on_foundations, stamp)
            if view.finished:  # after the race's end is written: the last racer's race is over
                self._unseal(tx.db, view, lambda: [*self.log.notations(tx.db, game_id), str(move)])
            response = self.answer_json(view) if idempotency_key else None
            written = tx.write(
                game_values(record),
                move_values(
                    record,
                    "move",
                    stamp,
                    notation=str(move),
                    revealed=step.revealed,
                    idempotency_key=idempotency_key,
                    response=response,
                    snapshot=record.state if in_force % SNAPSHOT_EVERY == 0 else None,
                ),
                progress,
            )
            if written is not None:
                events.append(written)
        if events:
            self.publish(events)
        if view.finished:
            self.ended(record.game, record.deal)
            if record.competition is not None:
                self.competition_ended(record.id)
        return MoveOutcome(view)

    def undo(
        self,
        game_id: str,
        player_id: str | None,
        version: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """Takes back the latest move (if it revealed nothing). With ``version``, only when it
        is the current version (else StaleVersion); with a key, once (retries replay)."""
        _check_key(idempotency_key)
        with self.store.transaction() as tx:
            record, name, first = self._locked(tx, game_id, player_id, idempotency_key)
            if first is not None:
                replayed = _replay(first, "undo", None, version)
                return MoveOutcome(self._view(tx.db, record, name), replayed)
            self._check_version(record, version)
            if record.status != Status.PLAYING:
                raise UndoUnavailable("The game is over: there is nothing left to undo.")
            if record.competition is not None:
                raise NotInChallenge("undo")
            rules = get_ruleset(record.game)
            active = self.log.active_entries(tx.db, game_id)
            if not active:
                raise UndoUnavailable("There is no move to undo.")
            if active[-1].revealed:
                raise UndoUnavailable(
                    "That move turned up a card you had not seen, so it cannot be undone."
                )
            kept = active[:-1]
            before = loads(record.state)
            state = self.log.state_at(tx.db, record, active, len(kept))
            stamp = now()
            record.state = dumps(state)
            record.undos += 1
            record.can_undo = bool(kept) and not kept[-1].revealed
            legal = rules.legal_moves(state)
            self._tick(record, stamp)
            self._advance(record, Status.PLAYING, stamp)
            changed = tuple(
                pid for pid, a, b in zip(rules.pile_ids, before.piles, state.piles) if a != b
            )
            undo_step = Step(before, Move.parse(active[-1].notation), state, False, changed)
            view = GameView(
                record,
                name,
                rules,
                state,
                legal,
                step=undo_step,
                max_moves=self.max_moves,
                idle_cap_ms=self.idle_cap_ms,
            )
            response = self.answer_json(view) if idempotency_key else None
            events = self._race_events(tx.db, record, name, rules.on_foundations(state), stamp)
            self._write(tx, record, "undo", stamp, idempotency_key, response)
        if events:
            self.publish(events)
        return MoveOutcome(view)

    def resign(
        self,
        game_id: str,
        player_id: str | None,
        version: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveOutcome:
        """Ends the game as lost; ``version`` and the key as for :meth:`undo`."""
        _check_key(idempotency_key)
        with self.store.transaction() as tx:
            record, name, first = self._locked(tx, game_id, player_id, idempotency_key)
            if first is not None:
                replayed = _replay(first, "resign", None, version)
                return MoveOutcome(self._view(tx.db, record, name), replayed)
            if record.status != Status.PLAYING:
                raise GameOver("The game is already over.")
            self._check_version(record, version)
            stamp = now()
            self._tick(record, stamp)
            self._advance(record, Status.LOST, stamp)
            stats.count_finished(tx.db, record, stamp)
            on_foundations = get_ruleset(record.game).on_foundations(loads(record.state))
            events = self._race_events(tx.db, record, name, on_foundations, stamp)
            view = self._view(tx.db, record, name)
            response = self.answer_json(view) if idempotency_key else None
            self._write(tx, record, "resign", stamp, idempotency_key, response)
        if events:
            self.publish(events)
        self.ended(record.game, record.deal)
        if record.competition is not None:
            self.competition_ended(record.id)
        return MoveOutcome(view)

    @staticmethod
    def _write(
        tx: MoveTransaction,
        record: GameRow,
        action: str,
        stamp: datetime,
        key: str | None,
        response: str | None,
    ) -> None:
        """Saves an undo's or a resign's row and its log entry, and commits: the move's path."""
        tx.write(
            game_values(record),
            move_values(record, action, stamp, idempotency_key=key, response=response),
        )

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
        view = GameView(
            record, name, rules, state, [], moves, max_moves=self.max_moves,
            idle_cap_ms=self.idle_cap_ms,
        )  # fmt: skip
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
        view = GameView(
            record, name, rules, state, [], moves, max_moves=self.max_moves,
            idle_cap_ms=self.idle_cap_ms, deal_winnable=True,
        )  # fmt: skip
        return ReplayView(view, moves, at, start)

    def analysis_source(self, game_id: str, viewer: str | None) -> tuple[str, int, list[str]]:
        """A finished game's deal and moves in force, for its analysis (issue #22): shown to
        whoever may see the game's solution — the same gate (``_finished_for``)."""
        with self.sessions() as db:
            record, _ = self._finished_for(db, game_id, viewer, N_("The analysis"))
            moves = [e.notation for e in self.log.finished_entries(db, game_id)]
        return record.game, record.deal, moves

    # -- the move log ---------------------------------------------------------------------

    def replay(self, game_id: str) -> tuple[State, State]:
        """The stored state and the state rebuilt from the deal and the move log."""
        with self.sessions() as db:
            record, _ = self._load(db, game_id)
            rules = get_ruleset(record.game)
            moves = [Move.parse(n) for n, _ in self.log.active_moves(db, game_id)]
            return loads(record.state), rules.replay(rules.deal(record.deal, self.deal_key), moves)

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _race_events(
        db: Session | Connection, record: GameRow, name: str, foundation_cards: int, stamp: datetime
    ) -> list[int]:
        if record.race_id is None:
            return []
        return race_events.after_race_step(db, record, name, foundation_cards, stamp)

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

    def _load(self, db: Session, game_id: str) -> tuple[GameRow, str]:
        row = (
            db.execute(SELECT_GAME, {"game_id": game_id}).first() if plausible_id(game_id) else None
        )
        if row is None:
            raise NotFound("There is no game with that id.")
        values = dict(row._mapping)
        name = values.pop("player_name")
        return GameRow(**values), name

    def _view(
        self, db: Session | Connection, record: GameRow, name: str, *, masked: bool = False
    ) -> GameView:
        rules = get_ruleset(record.game)
        state = loads(record.state)
        finished = record.status != Status.PLAYING
        legal = [] if finished else rules.legal_moves(state)
        view = GameView(
            record,
            name,
            rules,
            state,
            legal,
            masked=masked,
            max_moves=self.max_moves,
            idle_cap_ms=self.idle_cap_ms,
        )
        if finished:
            self._unseal(db, view, lambda: self.log.notations(db, record.id))
        return view

    def _unseal(
        self, db: Session | Connection, view: GameView, log: Callable[[], list[str]]
    ) -> None:
        """What a finished game shows besides its board: its deal's seal, and, where neither
        the seal nor the same-deal rule masks it, its move log and the solver's verdict (a
        spoiler too)."""
        record = view.record
        view.seal = self.sealer.of(db, record.game, record.deal, besides=record.id)
        if view.seal is not None:
            view.masked = True
        if not view.masked:
            view.log = log()
            view.deal_winnable = deal_winnable(db, record.game, record.deal)

    def spectate(self, game_id: str, viewer: str | None) -> GameView:
        """A racer's game as a spectator of its race sees it (contract v3): only the cards
        every racer of the race has seen are face up. Out of a running race, as :meth:`get`.
        A racer still playing the race watches nobody (the same-deal rule)."""
        with self.sessions() as db:
            record, name = self._load(db, game_id)
            plain = viewer == record.player_id or not race_running(db, record.race_id)
            racers = (
                []
                if plain
                else db.execute(
                    select(Game.player_id, Game.status, Game.state).where(
                        Game.race_id == record.race_id
                    )
                ).all()
            )
        if plain:
            # Outside the read above: ``get`` may write (SQLite would wait on this session).
            return self.get(game_id, viewer)
        if any(pid == viewer and status == Status.PLAYING for pid, status, _ in racers):
            raise SameDealInPlay()
        rules = get_ruleset(record.game)
        dealt = rules.deal(record.deal, self.deal_key)
        seen = [seen_slots(rules, dealt, loads(text)) for _, _, text in racers]
        watched = seen_slots(rules, dealt, loads(record.state))
        view = GameView(
            record, name, rules, loads(record.state), [], masked=True,
            max_moves=self.max_moves, idle_cap_ms=self.idle_cap_ms,
        )  # fmt: skip
        view.seal = Seal(SealKind.RACE, None)
        view.faces = shared_faces(slot_faces(dealt), watched, seen)
        return view

    @staticmethod
    def _check_owner(record: GameRow, player_id: str | None) -> None:
        if player_id != record.player_id:
            raise Forbidden("This game belongs to another player.")

    @staticmethod
    def _check_version(record: GameRow, version: int | None) -> None:
        if version is not None and version != record.version:
            raise StaleVersion(
                f"The board has changed since you saw it (version {version}, now "
                f"{record.version}); here is the current board."
            )

    def _check_playable(self, record: GameRow, version: int) -> None:
        if record.status != Status.PLAYING:
            if record.moves >= self.max_moves:
                raise GameOver(
                    f"The game is over: it reached the limit of {self.max_moves} moves and "
                    "counts as lost."
                )
            raise GameOver("The game is over (%(status)s).", status=record.status)
        if version != record.version:
            raise StaleVersion(
                f"The board has changed since you saw it (version {version}, now "
                f"{record.version}); here is the current board."
            )

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


def initial_status(rules: Ruleset, state: State) -> str:
    """The status of a game just dealt (a deal with no legal move is lost at once)."""
    return _status(rules, state, rules.legal_moves(state), False)


def _status(rules: Ruleset, state: State, legal: list[Move], can_undo: bool) -> str:
    """As ``Ruleset.status``, from legal moves already computed: with no legal move left the
    game stays in play while its last step can be undone (contract v2, "No moves left")."""
    if rules.is_won(state):
        return Status.WON
    return Status.PLAYING if legal or can_undo else Status.LOST
