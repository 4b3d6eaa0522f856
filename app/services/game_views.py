"""What the game use cases hand the web: a game as one viewer may see it, a replay step, and
what a move or a browser action did. Never more than that viewer is allowed to see."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from app.db.game_rows import GameRow
from app.db.models import as_utc
from app.engine import Move, Ruleset, ShownPile, State, Status, Step
from app.engine.seen import only_faces
from app.services.players import now
from app.services.seal import Seal, number_hidden

# Game ids are ``new_id()`` strings; anything else (a NUL byte, which PostgreSQL refuses in a
# query parameter, or a very long string) cannot name a game and is not sent to the database.
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def plausible_id(game_id: str) -> bool:
    return isinstance(game_id, str) and GAME_ID.fullmatch(game_id) is not None


@dataclass
class GameView:
    """A game as the web layer may show it: never more than the player is allowed to see."""

    record: GameRow
    player_name: str
    rules: Ruleset
    state: State
    legal_moves: list[Move]
    log: list[str] | None = None  # only for finished games shown whole
    step: Step | None = None  # the step just played, for fragments of the changed piles
    idle_cap_ms: int = 120_000  # how long a pause counts in the active time, at most
    # A finished game shown to a viewer who has not finished its deal keeps its hidden cards
    # hidden (the same-deal rule): they may still play the deal themselves.
    masked: bool = False
    max_moves: int | None = None  # the move cap, when the service knows it
    deal_winnable: bool | None = None  # the solver's verdict (finished, unmasked games)
    # A winnable verdict comes with the solver's winning line from the deal's start, unless it
    # is the game's analysis's (GameBase._unseal).
    solution_known: bool = True
    # The deal's seal (app/services/seal.py), looked up for finished games: while it holds,
    # the game is shown as if in play, and a rated or race game hides its number.
    seal: Seal | None = None
    # A spectator of a race sees only the faces every racer has seen (None: not a spectator).
    faces: frozenset[str] | None = None

    @property
    def number_hidden(self) -> bool:
        """The deal number is secret (seal.number_hidden): a rated or race game in play, or a
        finished one whose competition is still open."""
        g = self.record
        # A race's or a competition's game in play means its competition is on; a finished one
        # asks its deal's seal. (A casual game's number is the one its player chose.)
        competing = g.race_id is not None or g.competition is not None
        racing = competing and (
            not self.finished or (self.seal is not None and self.seal.hides_number)
        )
        return number_hidden(rated=g.rated, playing=not self.finished, race_running=racing)

    @property
    def deal_number(self) -> int | None:
        """The deal number as every page, answer and list may show it: None while secret."""
        return None if self.number_hidden else self.record.deal

    @property
    def move_limit_reached(self) -> bool:
        """Lost because the game reached the cap on moves per game (not for want of moves)."""
        return (
            self.max_moves is not None
            and self.record.status == Status.LOST
            and self.record.moves >= self.max_moves
        )

    @property
    def finished(self) -> bool:
        return self.record.status != Status.PLAYING

    @property
    def stock_count(self) -> int:
        """How many cards the stock holds (0 for a game without one): public at any time."""
        rules = self.rules
        return len(self.state.piles[rules.stock]) if rules.stock >= 0 else 0

    def idle_ms(self) -> int:
        """How long the game in play has waited since its last action (0 before the first
        move, and once it is over)."""
        if self.record.first_move_at is None or self.finished:
            return 0
        last = as_utc(self.record.updated_at)
        assert last is not None
        return max(0, int((now() - last).total_seconds() * 1000))

    @property
    def shows_everything(self) -> bool:
        """Every card (face-down and stock included): finished, and the viewer may see it."""
        return self.finished and not self.masked

    def piles(self, only: Collection[str] | None = None) -> dict[str, ShownPile]:
        """The piles as this viewer may see them (``only``: just those, while in play): the
        public view while the game is in play or ``masked``, else every card, the stock's too."""
        if not self.shows_everything:
            public = self.rules.public_view(self.state, only)
            return only_faces(public, self.faces) if self.faces is not None else public
        return {pid: ShownPile.of(cards) for pid, cards in self.rules.full_view(self.state).items()}


@dataclass(frozen=True)
class ReplayView:
    view: GameView  # the board after ``step`` moves
    moves: list[str]
    step: int
    start: State | None = None  # the deal as dealt (a finished game's: every card may be shown)


@dataclass
class MoveOutcome:
    view: GameView
    replayed: str | None = None  # the stored first answer (JSON) to a retried request
    # The answer's JSON as stored with this request's Idempotency-Key: sent as it is, so that
    # the state is serialized once (issue 26).
    stored: str | None = None


@dataclass
class Played:
    """What one browser action did: the board after it and each step it took, in order (the
    player's move first, then the cards that went up by themselves)."""

    view: GameView
    steps: list[Step]

    @property
    def changed(self) -> tuple[str, ...]:
        """The piles any of the steps changed, in the layout's order."""
        touched = {pid for step in self.steps for pid in step.changed}
        return tuple(pid for pid in self.view.rules.pile_ids if pid in touched)
