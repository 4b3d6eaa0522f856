"""Moves and their text notation: ``t3-f1``, ``t2-t7/3``, ``stock-waste``, ``waste-stock/24``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.engine.errors import InvalidMove
from app.engine.reasons import N_

_PILE = r"stock|waste|[ftr][1-9][0-9]?"
_NOTATION = re.compile(rf"^({_PILE})-({_PILE})(?:/([1-9][0-9]{{0,2}}))?$")


@dataclass(frozen=True, slots=True)
class Move:
    """Move ``count`` cards from the top of ``source`` to ``target``.

    Dealing is ``stock → waste`` (count 1); a redeal is ``waste → stock`` with the whole waste
    as its count, so that every move says how many cards it carries.
    """

    source: str
    target: str
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Move:
        match = _NOTATION.match(text.strip())
        if match is None:
            raise InvalidMove(
                N_(
                    "%(text)s is not a move; write it as from-to, e.g. t3-f1, or t2-t7/3 "
                    "for 3 cards."
                ),
                "not_a_move",
                text=repr(text),
            )
        source, target, count = match.groups()
        return cls(source, target, int(count) if count else 1)

    def __str__(self) -> str:
        base = f"{self.source}-{self.target}"
        return base if self.count == 1 else f"{base}/{self.count}"
