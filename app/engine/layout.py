"""What a game's table looks like, as data the web layer can render without knowing the rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class PileKind(StrEnum):
    STOCK = "stock"
    WASTE = "waste"
    FOUNDATION = "foundation"
    TABLEAU = "tableau"
    RESERVE = "reserve"


class Fan(StrEnum):
    """How a pile's cards are spread on the table."""

    NONE = "none"  # squared up: only the top card shows
    DOWN = "down"  # fanned downwards: every card shows


@dataclass(frozen=True, slots=True)
class PileSpec:
    """One pile: its id, what kind of pile it is, and its cell on the table grid (0-based)."""

    id: str
    kind: PileKind
    row: int
    col: int
    fan: Fan = Fan.NONE
    label: str = ""  # e.g. "♣ from A" for a foundation with a fixed suit and start


@dataclass(frozen=True, slots=True)
class Layout:
    """All piles of a game in a fixed order; the order is also the order inside ``State``."""

    piles: tuple[PileSpec, ...]
    rows: int
    cols: int
    index: dict[str, int] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {p.id: i for i, p in enumerate(self.piles)})
        cells = {(p.row, p.col) for p in self.piles}
        if len(cells) != len(self.piles) or len(self.index) != len(self.piles):
            raise ValueError("two piles share an id or a cell")

    def indices(self, kind: PileKind) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.piles) if p.kind is kind)


def row_of(
    kind: PileKind,
    prefix: str,
    count: int,
    row: int,
    col: int = 0,
    fan: Fan = Fan.NONE,
    labels: tuple[str, ...] = (),
) -> list[PileSpec]:
    """``count`` piles ``prefix1…`` side by side, starting at ``(row, col)``."""
    return [
        PileSpec(f"{prefix}{i + 1}", kind, row, col + i, fan, labels[i] if labels else "")
        for i in range(count)
    ]
