"""What every game shares: checking a move's shape, stepping, status and the public view.

Each game subclasses ``Ruleset`` with its facts and layout as data and three hooks: how it
deals (``_layout_deal``), which moves are legal (``legal_moves``) and how one move plays out
(``_play``, which raises ``IllegalMove`` with the reason in a player's words). The checklist:
docs/adding-a-game.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NoReturn

from app.engine import assist, words
from app.engine.cards import SHOWN, code_of
from app.engine.deals import DEVELOPMENT_KEY, canonical_deck, check_deal_number, shuffled
from app.engine.errors import IllegalMove, InvalidMove
from app.engine.layout import Layout, PileKind
from app.engine.moves import Move
from app.engine.reasons import N_, GameRef, Nn_, Param, PileRef, Words
from app.engine.state import Pile, State, Step

RULES_VERSION = "v1"


class Status(StrEnum):
    PLAYING = "playing"
    WON = "won"
    LOST = "lost"


@dataclass(frozen=True, slots=True)
class ShownPile:
    """A pile as one viewer is shown it, bottom → top.

    ``cards`` holds the card codes, None for a face-down card, or is None altogether for a pile
    whose cards are not shown: the stock of a game in play, whose order is the game's future.
    ``count`` is how many cards the pile holds, which anyone may know at any time.
    """

    cards: tuple[str | None, ...] | None
    count: int

    @classmethod
    def of(cls, cards: Sequence[str | None]) -> ShownPile:
        """A pile whose every card is listed (face-down ones as None)."""
        return cls(tuple(cards), len(cards))

    @classmethod
    def counted(cls, count: int) -> ShownPile:
        """A pile shown only by its size."""
        return cls(None, count)


def fail(code: str, template: str, **params: Param) -> NoReturn:
    """Refuse a move: ``code`` names the reason, ``template`` (marked with ``N_``) words it in
    English with ``params`` (app/engine/reasons.py)."""
    raise IllegalMove(template, code, **params)


def refuse(why: Words) -> NoReturn:
    """Refuse a move for a reason a building check gave (app/engine/building.py)."""
    raise IllegalMove(why.template, why.code, **why.params)


class Ruleset(ABC):
    slug: str
    name: str
    decks: int
    layout: Layout
    max_redeals: int | None = None  # None: the game has no redeal at all
    # The game's facts for the pages, in one home with its rules:
    blurb: str  # one line on the home page: what the table looks like, what makes it different
    table_note: str  # under the board: what the table shows that the cards alone do not say
    runs_move: bool = False  # a run of several cards moves together (the board offers a count)
    shows_base_rank: bool = False  # the board's facts show the base rank ("—" until chosen)
    all_face_up: bool = False  # no card is ever hidden: looking a move ahead reveals nothing

    def __init__(self) -> None:
        self.cards = 52 * self.decks
        self.foundations = self.layout.indices(PileKind.FOUNDATION)
        self.tableau = self.layout.indices(PileKind.TABLEAU)
        self.reserves = self.layout.indices(PileKind.RESERVE)
        self.stock = self.layout.index.get("stock", -1)
        self.waste = self.layout.index.get("waste", -1)
        self.pile_ids = tuple(p.id for p in self.layout.piles)
        self._kinds = tuple(p.kind for p in self.layout.piles)

    # -- dealing -------------------------------------------------------------------------

    def deck(self) -> list[int]:
        """The list that the deal shuffles (canonical order, §1.5)."""
        return canonical_deck(self.decks)

    def deal(self, number: int, key: bytes = DEVELOPMENT_KEY) -> State:
        cards = shuffled(key, self.slug, check_deal_number(number), self.deck())
        piles = self._layout_deal(cards)
        return State(self.slug, tuple(piles[pid] for pid in self.pile_ids))

    @abstractmethod
    def _layout_deal(self, cards: list[int]) -> dict[str, Pile]:
        """Place the shuffled cards: pile id → cards bottom → top (stock: next card last)."""

    # -- playing -------------------------------------------------------------------------

    @abstractmethod
    def legal_moves(self, state: State) -> list[Move]:
        """Every legal move, each exactly once."""

    @abstractmethod
    def _play(self, piles: list[Pile], state: State, src: int, dst: int, count: int) -> bool:
        """Carry out the move on ``piles`` in place or raise ``IllegalMove``.

        Returns whether a hidden card came to light.
        """

    def step(self, state: State, move: Move) -> Step:
        src, dst = self.pile_index(move.source), self.pile_index(move.target)
        if isinstance(move.count, bool) or not isinstance(move.count, int) or move.count < 1:
            raise InvalidMove(N_("The number of cards to move must be 1 or more."), "bad_count")
        if src == dst:
            fail("same_pile", N_("A card cannot be moved onto the pile it is already on."))
        piles = list(state.piles)
        if not piles[src]:
            fail("pile_empty", N_("%(pile)s is empty."), pile=self.pile_ref(src))
        if move.count > len(piles[src]):
            held = len(piles[src])
            raise IllegalMove.counted(
                "pile_holds_fewer",
                Nn_("%(pile)s holds only %(n)s card.", "%(pile)s holds only %(n)s cards."),
                held,
                pile=self.pile_ref(src),
            )
        before_redeals = state.redeals
        revealed = self._play(piles, state, src, dst, move.count)
        redeals = before_redeals + (1 if src == self.waste and dst == self.stock else 0)
        after = State(state.game, tuple(piles), redeals)
        changed = tuple(
            self.pile_ids[i] for i, (a, b) in enumerate(zip(state.piles, after.piles)) if a != b
        )
        return Step(state, move, after, revealed, changed)

    def apply(self, state: State, move: Move) -> State:
        return self.step(state, move).after

    def replay(self, start: State, moves: Sequence[Move]) -> State:
        state = start
        for move in moves:
            state = self.apply(state, move)
        return state

    # -- reading a state -----------------------------------------------------------------

    def pile_index(self, pile_id: str) -> int:
        try:
            return self.layout.index[pile_id]
        except (KeyError, TypeError):
            raise InvalidMove(
                N_("%(game)s has no pile called %(pile)s."),
                "no_such_pile",
                game=GameRef(self.name),
                pile=repr(pile_id),
            ) from None

    def pile(self, state: State, pile_id: str) -> Pile:
        return state.piles[self.pile_index(pile_id)]

    def pile_ref(self, index: int) -> PileRef:
        """The pile as a parameter of words (named in the player's language by the web)."""
        return PileRef(self._kinds[index].value, self.pile_ids[index])

    def is_won(self, state: State) -> bool:
        return sum(len(state.piles[i]) for i in self.foundations) == self.cards

    def status(self, state: State, can_undo: bool = False) -> Status:
        """Won, lost or still playing. With no legal move left the game goes on while the last
        step can be taken back (``can_undo``: it revealed nothing); the player may undo it or
        resign. Only when nothing can be undone either is the game lost by itself."""
        if self.is_won(state):
            return Status.WON
        return Status.PLAYING if can_undo or self.legal_moves(state) else Status.LOST

    def base_rank(self, state: State) -> int | None:
        """The rank every foundation starts from, where the game has one and it is known."""
        return None

    def redeals_left(self, state: State) -> int | None:
        if self.max_redeals is None:
            return None
        return self.max_redeals - state.redeals

    def on_foundations(self, state: State) -> int:
        return sum(len(state.piles[i]) for i in self.foundations)

    def public_view(
        self, state: State, only: Collection[str] | None = None
    ) -> dict[str, ShownPile]:
        """What a player may see of a game in play: face-down cards as None, the stock as a count
        (``only``: just those piles, for a fragment of the piles a move changed).

        This is the only view the web layer may render while a game is being played.
        """
        view: dict[str, ShownPile] = {}
        shown = SHOWN.__getitem__
        for pid, pile in zip(self.pile_ids, state.piles):
            if only is not None and pid not in only:
                continue
            if pid == "stock":
                view[pid] = ShownPile.counted(len(pile))
            else:
                view[pid] = ShownPile(tuple(map(shown, pile)), len(pile))
        return view

    def full_view(self, state: State) -> dict[str, list[str]]:
        """Every card, face-down and stock included: only for finished games and replays."""
        return {
            pid: [code_of(c if c >= 0 else ~c) for c in pile]
            for pid, pile in zip(self.pile_ids, state.piles)
        }

    # -- what the interface may do for the player (app/engine/assist.py) -------------------

    def deal_move(self, state: State) -> Move:
        """The move the Deal button means now: a redeal when one is due, else a deal."""
        return assist.deal_move(self, state)

    def auto_move(self, state: State, legal: list[Move], keep: str = "") -> Move | None:
        """The next card the auto-move preference sends up, or None (``keep``: a pile whose
        top card stays, the one the player just placed)."""
        return assist.auto_move(self, state, legal, keep)

    def finish_moves(self, state: State, legal: list[Move]) -> list[Move] | None:
        """The moves that win from here without a choice, or None."""
        return assist.finish_moves(self, state, legal)

    def dead_ends(self, state: State, legal: list[Move]) -> list[Move]:
        """The legal moves after which no legal move is left, where looking reveals nothing."""
        return assist.dead_ends(self, state, legal)

    # -- moves in words (app/engine/words.py) ----------------------------------------------

    def describe(self, step: Step) -> str:
        """The step in a player's words, naming only cards face up after it."""
        return words.describe_step(self, step)

    def step_words(self, step: Step, auto: bool = False) -> list[Words]:
        """The step's sentences as words, for the web to say in the player's language."""
        return words.step_words(self, step, auto)

    def undo_words(self, step: Step) -> Words:
        """An undo as words, for the web to say in the player's language."""
        return words.undo_words(self, step)

    def replay_words_of(self, start: State, moves: list[str]) -> list[Words]:
        """A finished game's moves as words, for the web to say in the player's language."""
        return words.replay_words_of(self, start, moves)

    def replay_words(self, start: State, moves: list[str]) -> list[str]:
        """A finished game's moves (notation) in words, from the deal ``start``."""
        return words.replay_words(self, start, moves)

    # -- helpers for the games -----------------------------------------------------------

    def kind(self, index: int) -> PileKind:
        return self._kinds[index]

    def _refuse_from_foundation(self, src: int) -> None:
        if self._kinds[src] is PileKind.FOUNDATION:
            fail("foundation_keeps", N_("No card ever leaves a foundation."))

    def _deal_one(self, piles: list[Pile], src: int, dst: int, count: int) -> bool:
        """Stock → waste, one card; the move every game with a stock shares."""
        if dst != self.waste:
            fail("stock_to_waste", N_("Cards from the stock are dealt to the waste."))
        if count != 1:
            fail("stock_one_at_a_time", N_("The stock is dealt one card at a time."))
        stock = piles[src]
        piles[src], piles[dst] = stock[:-1], (*piles[dst], stock[-1])
        return True

    def _turn_waste_over(self, piles: list[Pile], state: State, count: int) -> None:
        """The redeal of Corners and Patriarchs: waste → stock, whole, without shuffling."""
        left = self.redeals_left(state)
        if left is None:
            fail(
                "no_redeal",
                N_("%(game)s has no redeal: the stock is dealt only once."),
                game=GameRef(self.name),
            )
        if piles[self.stock]:
            fail("redeal_stock_not_empty", N_("You can redeal only when the stock is empty."))
        if left <= 0:
            raise IllegalMove.counted(
                "no_redeals_left",
                Nn_(
                    "No redeals left: %(game)s allows redealing only once.",
                    "No redeals left: %(game)s allows redealing only %(n)s times.",
                ),
                self.max_redeals or 0,
                game=GameRef(self.name),
            )
        waste = piles[self.waste]
        if count != len(waste):
            fail(
                "redeal_whole_waste",
                N_("A redeal turns over the whole waste (%(count)s cards)."),
                count=len(waste),
            )
        # The waste's first card (its bottom) becomes the stock's next card (its end).
        piles[self.stock], piles[self.waste] = waste[::-1], ()

    def redeal_moves(self, state: State) -> list[Move]:
        left = self.redeals_left(state)
        piles = state.piles
        if left and not piles[self.stock] and piles[self.waste]:
            return [Move("waste", "stock", len(piles[self.waste]))]
        return []
