"""A game's state, the answer of every move, and the coach's answers: hints, analysis, replays."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from pydantic_core import to_json

from app.engine import ShownPile
from app.services.game_views import GameView
from app.services.hint_views import HintView
from app.web.api.schemas.base import RANKS, Answer, GameSlug, JSONBytes, PlayerRef, iso_or_none

# -- game state -----------------------------------------------------------------------------


class Pile(Answer):
    """A pile, bottom → top. In play the stock is only a count and face-down cards are null;
    a finished game shown whole gives the stock's cards too."""

    count: int | None = Field(default=None, description="stock only: how many cards")
    cards: list[str | None] | None = Field(
        default=None, description="card codes (rules.md §0); null for a face-down card"
    )


def pile_data(pile_id: str, pile: ShownPile) -> dict[str, Any]:
    """A pile as :class:`Pile` describes it: the stock says its count, and its cards only where
    they are shown (a finished game shown whole); every other pile lists its cards.

    The one place a shown pile becomes JSON: the hidden-information tests (tests/web/hidden.py)
    hold every game state the suite receives to this shape."""
    if pile_id != "stock":
        return {"cards": list(pile.cards or ())}
    if pile.cards is None:
        return {"count": pile.count}
    return {"count": pile.count, "cards": list(pile.cards)}


class LegalMove(Answer):
    from_: str = Field(alias="from")
    to: str
    count: int


class GameState(Answer):
    """A game as the caller may see it (contract.md, Game state; v2 fields included)."""

    id: str
    game: GameSlug
    deal: int | None = Field(
        description="The deal number; null while it is sealed (a rated game in play, a game of "
        "a race still on: contract v3)."
    )
    rules: str
    rated: bool = Field(description="The server drew the deal: it counts on the leaderboards.")
    player: PlayerRef
    status: Literal["playing", "won", "lost"]
    version: int
    moves: int
    undos: int
    can_undo: bool
    base_rank: str | None
    redeals_left: int | None
    on_foundations: int
    cards: int
    started_at: str | None = Field(description="ISO 8601, the first move")
    active_ms: int
    finished_at: str | None
    piles: dict[str, Pile]
    legal_moves: list[LegalMove]
    max_moves: int | None = Field(default=None, description="The cap on moves per game.")
    ended_by: Literal["move_limit"] | None = Field(
        default=None, description="Only when the move cap ended the game."
    )
    log: list[str] | None = Field(
        default=None, description="A finished game's moves, for those who may see them."
    )
    deal_winnable: bool | None = Field(
        default=None, description="Finished games only: the solver's verdict (null: undecided)."
    )


def game_state_data(view: GameView) -> dict[str, Any]:
    """The state of ``view`` as the API shows it, as :class:`GameState` describes it.

    Built as plain data, not as models: see the module doc (the test clients validate every
    state the suite receives against GameState, tests/web/answers.py)."""
    g, rules = view.record, view.rules
    base = rules.base_rank(view.state)
    data: dict[str, Any] = {
        "id": g.id,
        "game": g.game,
        "deal": view.deal_number,
        "rules": g.rules,
        "rated": g.rated,
        "player": {"id": g.player_id, "name": view.player_name},
        "status": g.status,
        "version": g.version,
        "moves": g.moves,
        "undos": g.undos,
        "can_undo": g.can_undo and not view.finished,
        "base_rank": None if base is None else RANKS[base - 1],
        "redeals_left": rules.redeals_left(view.state),
        "on_foundations": rules.on_foundations(view.state),
        "cards": rules.cards,
        "started_at": iso_or_none(g.first_move_at),
        "active_ms": g.active_ms,
        "finished_at": iso_or_none(g.finished_at),
        "piles": {pid: pile_data(pid, pile) for pid, pile in view.piles().items()},
        "legal_moves": [
            {"from": m.source, "to": m.target, "count": m.count} for m in view.legal_moves
        ],
    }
    if view.max_moves is not None:
        data["max_moves"] = view.max_moves
        if view.move_limit_reached:
            data["ended_by"] = "move_limit"
    if view.log is not None:
        data["log"] = view.log
    if view.finished:
        data["deal_winnable"] = view.deal_winnable
    return data


def game_state_json(view: GameView) -> bytes:
    """The JSON bytes of a game state: what every state answer sends, and what an
    Idempotency-Key's first answer stores."""
    return to_json(game_state_data(view))


def answer_text(view: GameView) -> str:
    """:func:`game_state_json` as text: what the move log stores for an Idempotency-Key."""
    return game_state_json(view).decode()


def state_response(view: GameView, status: int = 200) -> JSONBytes:
    return JSONBytes(game_state_json(view), status_code=status)


# -- hints ----------------------------------------------------------------------------------


class MoveOut(Answer):
    from_: str = Field(alias="from")
    to: str
    count: int


class HintAnswer(Answer):
    move: MoveOut | None = Field(description="The move to play, or null.")
    outcome: Literal["winnable", "lost", "unknown", "estimate"]
    exact: bool = Field(description="true: nothing is hidden and the outcome is the solver's")
    message: str
    chance: float | None = Field(
        default=None,
        description="estimate only: the share (0.0-1.0) of sampled arrangements of the hidden "
        "cards, consistent with everything the player has seen, that the search wins",
    )
    version: int = Field(description="the game version the hint is for")
    hints_used: int
    casual: bool = Field(description="a hinted game is casual from the first hint on")


def hint_answer(hint: HintView, message: str) -> HintAnswer:
    """A hint as the API answers it, its ``message`` already said in the caller's language."""
    move = hint.move
    return HintAnswer.model_validate(
        {
            "move": None
            if move is None
            else {"from": move.source, "to": move.target, "count": move.count},
            "outcome": hint.outcome,
            "exact": hint.exact,
            "message": message,
            "chance": hint.chance,
            "version": hint.version,
            "hints_used": hint.hints_used,
            "casual": hint.casual,
        }
    )


class SlipOut(Answer):
    ply: int = Field(description="1-based number of the move (in force) that lost the deal")
    move: MoveOut = Field(description="the move played there")
    better: MoveOut = Field(description="a move from the same position that keeps it winnable")


class AnalysisAnswer(Answer):
    deal_winnable: bool | None = Field(description="the deal, every card known; null: undecided")
    slip: SlipOut | None = Field(
        description="the first move after which the game could no longer be won, from a "
        "position that could; null when won, never winnable, or undecided"
    )
    knowing: Literal["visible", "all"] = Field(description="what the analysis knew: all cards")
    decided: bool = Field(
        description="false: a search was cut short by its budget; the analysis is undecided"
    )


# -- replays and the deal of the day --------------------------------------------------------


class ReplayAnswer(Answer):
    step: int = Field(description="Moves of the log applied.")
    moves: list[str] = Field(description="The whole move log, in notation.")
    game: GameState = Field(description="The game after `step` moves, every card shown.")
