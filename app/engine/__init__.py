"""The game engine: pure Python, standard library only, no I/O, no clock, no global randomness.

Everything the rest of the app needs is importable from here.
"""

from app.engine.cards import Card
from app.engine.deals import DEVELOPMENT_KEY, MAX_DEAL
from app.engine.errors import (
    CorruptState,
    EngineError,
    IllegalMove,
    InvalidDeal,
    InvalidMove,
    UnknownGame,
)
from app.engine.games import GAMES, get_ruleset
from app.engine.layout import Fan, Layout, PileKind, PileSpec
from app.engine.moves import Move
from app.engine.reasons import (
    CardRef,
    CardsRef,
    GameRef,
    PileRef,
    RangeRef,
    RankRef,
    ShareRef,
    SuitRef,
    Words,
)
from app.engine.ruleset import RULES_VERSION, Ruleset, ShownPile, Status
from app.engine.serialize import dumps, loads
from app.engine.state import State, Step

__all__ = [
    "DEVELOPMENT_KEY",
    "GAMES",
    "MAX_DEAL",
    "RULES_VERSION",
    "Card",
    "CardRef",
    "CardsRef",
    "CorruptState",
    "EngineError",
    "Fan",
    "GameRef",
    "IllegalMove",
    "InvalidDeal",
    "InvalidMove",
    "Layout",
    "Move",
    "PileKind",
    "PileRef",
    "PileSpec",
    "RangeRef",
    "RankRef",
    "Ruleset",
    "ShareRef",
    "ShownPile",
    "State",
    "Status",
    "Step",
    "SuitRef",
    "UnknownGame",
    "Words",
    "dumps",
    "get_ruleset",
    "loads",
]
