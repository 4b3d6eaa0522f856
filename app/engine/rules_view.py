"""What the player's helpers (assist.py) and the words for moves (words.py) read of a game's
rules. ``Ruleset`` has all of it; naming it here, below both, keeps them from importing the
module that imports them."""

from __future__ import annotations

from typing import Protocol

from app.engine.layout import Layout, PileKind
from app.engine.moves import Move
from app.engine.reasons import PileRef
from app.engine.state import State


class RulesView(Protocol):
    layout: Layout
    cards: int  # every card of the game's decks
    stock: int  # the stock's pile index, -1 without one
    waste: int  # the waste's pile index, -1 without one
    all_face_up: bool

    def legal_moves(self, state: State) -> list[Move]: ...

    def apply(self, state: State, move: Move) -> State: ...

    def is_won(self, state: State) -> bool: ...

    def base_rank(self, state: State) -> int | None: ...

    def kind(self, index: int) -> PileKind: ...

    def pile_index(self, pile_id: str) -> int: ...

    def pile_ref(self, index: int) -> PileRef: ...

    def redeal_moves(self, state: State) -> list[Move]: ...
