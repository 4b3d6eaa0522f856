"""What a search is allowed to spend, and what it answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from app.engine import Move
from app.solver.position import Mv


class Outcome(StrEnum):
    WINNABLE = "winnable"
    LOST = "lost"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may spend: positions entered, and an optional out-of-time check.

    ``out_of_time`` is called every ``check_every`` positions; the caller decides what time
    means (the solver itself reads no clock).
    """

    nodes: int = 200_000
    out_of_time: Callable[[], bool] | None = None
    check_every: int = 1024


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    moves: tuple[Move, ...] = ()  # a winning line from the given position (winnable only)
    nodes: int = 0  # positions entered
    generated: int = 0  # positions produced by the move generator
    out_of_time: bool = False
    path: tuple[Mv, ...] = field(default=(), repr=False)
