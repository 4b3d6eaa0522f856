"""What every game use case shares: the settings and collaborators the bootstrap passes in,
loading a game row, and building the view a viewer may see of it.

The use cases themselves live beside it: starting and reading (app/services/games.py), the
actions that change a game (app/services/game_actions.py) and replays of finished games
(app/services/replay_views.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import SELECT_GAME, GameRow
from app.db.move_store import MoveStore
from app.engine import Move, Ruleset, State, Status, get_ruleset
from app.services.errors import Forbidden, NotFound
from app.services.game_views import GameView, plausible_id
from app.services.move_log import MoveLog
from app.services.players import now
from app.services.seal import Sealer
from app.services.state_texts import STATES
from app.services.verdicts import analysed_winnable, deal_winnable

DEFAULT_MAX_MOVES = 2000


def _no_answers(view: GameView) -> str:
    raise RuntimeError("Games.answer_json is not set: the bootstrap sets it (app/bootstrap.py)")


@dataclass
class GameBase:
    """The game use cases' state, bound to a database and the server's deal key."""

    sessions: sessionmaker[Session]
    deal_key: bytes
    max_moves: int = DEFAULT_MAX_MOVES  # accepted moves per game; the last one ends it as lost
    # Active time: each pause between two actions counts up to this long (IDLE_CAP_SECONDS).
    idle_cap_ms: int = 120_000
    _rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)
    # The move path's connections and transactions (app/db/move_store.py), built by the app.
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
    # The API's JSON of a state (app/web/api/schemas/game_state.py), stored with an
    # Idempotency-Key's log entry so that a retry gets the first answer as it was sent: the
    # answer's shape belongs to the web layer, which the services do not import.
    answer_json: Callable[[GameView], str] = field(default=_no_answers)
    # The time written on games and their moves: started, updated, finished, active time
    # (tests set another to make pauses without waiting).
    stamps: Callable[[], datetime] = field(default=now)
    # The seal of deals, and with it the date and time the competition's rules go by: the
    # process's one Sealer (app/bootstrap.py).
    sealer: Sealer = field(kw_only=True)
    log: MoveLog = field(init=False)

    def __post_init__(self) -> None:
        self.log = MoveLog(self.deal_key)

    def _load(self, db: Session, game_id: str) -> tuple[GameRow, str]:
        row = (
            db.execute(SELECT_GAME, {"game_id": game_id}).first() if plausible_id(game_id) else None
        )
        if row is None:
            raise NotFound("There is no game with that id.")
        values = dict(row._mapping)
        name = values.pop("player_name")
        return GameRow(**values), name

    def _new_view(
        self,
        record: GameRow,
        name: str,
        rules: Ruleset,
        state: State,
        legal: list[Move],
        **details: Any,
    ) -> GameView:
        """A view of ``state`` with the service's move cap and idle cap."""
        return GameView(
            record, name, rules, state, legal, max_moves=self.max_moves,
            idle_cap_ms=self.idle_cap_ms, **details,
        )  # fmt: skip

    def _view(
        self, db: Session | Connection, record: GameRow, name: str, *, masked: bool = False
    ) -> GameView:
        rules = get_ruleset(record.game)
        state = STATES.loads(record.state)
        finished = record.status != Status.PLAYING
        legal = [] if finished else rules.legal_moves(state)
        view = self._new_view(record, name, rules, state, legal, masked=masked)
        if finished:
            self._unseal(db, view, lambda: self.log.notations(db, record.id))
        return view

    def _unseal(
        self,
        db: Session | Connection,
        view: GameView,
        log: Callable[[], list[str]],
        *,
        analysed: bool = True,
    ) -> None:
        """What a finished game shows besides its board: its deal's seal, and, where neither
        the seal nor the same-deal rule masks it, its move log and the solver's verdict (a
        spoiler too). ``analysed=False``: the game has just ended, so no analysis of it is
        stored yet (the move that ended it does not look)."""
        record = view.record
        view.seal = self.sealer.of(db, record.game, record.deal, besides=record.id)
        if view.seal is not None:
            view.masked = True
        if not view.masked:
            view.log = log()
            view.deal_winnable = deal_winnable(db, record.game, record.deal)
            if view.deal_winnable is None and analysed:
                # Not judged (or undecided): the game's analysis may have decided the deal. It
                # keeps no winning line from the deal's start, so there is no solution to show.
                view.deal_winnable = analysed_winnable(db, record.id)
                view.solution_known = False

    @staticmethod
    def _check_owner(record: GameRow, player_id: str | None) -> None:
        if player_id != record.player_id:
            raise Forbidden("This game belongs to another player.")


def status_of(rules: Ruleset, state: State, legal: list[Move], can_undo: bool) -> str:
    """As ``Ruleset.status``, from legal moves already computed: with no legal move left the
    game stays in play while its last step can be undone (contract v2, "No moves left")."""
    if rules.is_won(state):
        return Status.WON
    return Status.PLAYING if legal or can_undo else Status.LOST


def initial_status(rules: Ruleset, state: State) -> str:
    """The status of a game just dealt (a deal with no legal move is lost at once)."""
    return status_of(rules, state, rules.legal_moves(state), False)
