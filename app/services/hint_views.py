"""What a hint hands the web: the move to play (or none), what the solver knows of the
position, and its sentence as words the web says in the player's language."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.engine import Move, Words


@dataclass
class HintView:
    move: Move | None
    outcome: str  # app.solver.Outcome's value: winnable, lost, unknown or estimate
    exact: bool  # nothing is hidden and the outcome is the solver's
    # The sentence in English; ``words``, when there are any, say it in any language (an
    # estimate is built from numbers), else this is a catalog message itself.
    message: str
    chance: float | None = None  # estimates: the share of sampled arrangements won
    words: list[Words] = field(default_factory=list)
    line: list[str] = field(default_factory=list)  # an exact win's whole line, to keep
    version: int = 0  # the game version the hint is for
    hints_used: int = 0

    @property
    def casual(self) -> bool:
        """A hinted game is casual from the first hint on."""
        return self.hints_used > 0

    @classmethod
    def of(cls, answer: dict[str, Any]) -> HintView:
        """A worker's answer (app/services/solver_jobs.py ``hint_job``: plain data)."""
        move = answer["move"]
        return cls(
            None if move is None else Move(move["from"], move["to"], int(move["count"])),
            str(answer["outcome"]),
            bool(answer["exact"]),
            str(answer["message"]),
            answer.get("chance"),
            list(answer.get("words") or []),
            list(answer.get("line") or []),
        )
