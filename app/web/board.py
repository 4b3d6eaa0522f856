"""What the board templates may see: piles as the player is allowed to see them, nothing more.

The handler builds these from ``GameView.piles()``, which masks face-down and stock cards while
a game is in play; templates never receive the engine state itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.engine import Fan, PileKind
from app.services.games import GameView


@dataclass(frozen=True, slots=True)
class CardView:
    code: str | None  # None: face down


@dataclass(frozen=True, slots=True)
class PileView:
    id: str
    kind: str
    row: int
    col: int
    fanned: bool
    label: str
    cards: tuple[CardView, ...]
    count: int  # the stock shows only how many cards it holds

    @property
    def top(self) -> CardView | None:
        return self.cards[-1] if self.cards else None


def pile_views(view: GameView, only: tuple[str, ...] | None = None) -> list[PileView]:
    piles: dict[str, Any] = view.piles()
    out = []
    for spec in view.rules.layout.piles:
        if only is not None and spec.id not in only:
            continue
        shown = piles[spec.id]
        # A stock in play is only a count; cards are listed only once the game is over.
        codes = shown.get("cards", []) if spec.kind is not PileKind.STOCK or view.finished else []
        count = shown.get("count", len(codes))
        out.append(
            PileView(
                id=spec.id,
                kind=spec.kind.value,
                row=spec.row,
                col=spec.col,
                fanned=spec.fan is Fan.DOWN,
                label=spec.label,
                cards=tuple(CardView(c) for c in codes),
                count=count,
            )
        )
    return out


def status_context(view: GameView) -> dict[str, Any]:
    g, rules, state = view.record, view.rules, view.state
    return {
        "game_id": g.id,
        "status": g.status,
        "version": g.version,
        "moves": g.moves,
        "undos": g.undos,
        "can_undo": g.can_undo and not view.finished,
        "on_foundations": rules.on_foundations(state),
        "cards": rules.cards,
        "redeals_left": rules.redeals_left(state),
        "base_rank": rules.base_rank(state),
        "legal_moves": [str(m) for m in view.legal_moves],
        "finished": view.finished,
    }
