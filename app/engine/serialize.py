"""A compact, versioned text form of a full state, for the database.

``1:corners:0:KC,8D,7H,5S,4D,7C,…`` — format version, game slug, redeals used, then one field
per pile in layout order, separated by ``,``. A pile is its card codes run together, bottom →
top; a face-down card has a lower-case suit (``ac``). Readable in a database console, and
checked on the way back in so that a damaged row fails loudly instead of dealing wrong cards.
"""

from __future__ import annotations

from app.engine.cards import code_of
from app.engine.errors import CorruptState, UnknownGame
from app.engine.games import get_ruleset
from app.engine.state import Pile, State

FORMAT = "1"


def dumps(state: State) -> str:
    # Every move writes its whole state: one table lookup a card (under a third of the time of
    # building each code, bench/RESULTS.md).
    text = _TEXT.__getitem__
    piles = ",".join(["".join(map(text, pile)) for pile in state.piles])
    return f"{FORMAT}:{state.game}:{state.redeals}:{piles}"


def _face_down(code: str) -> str:
    return code[0] + code[1].lower()


_TEXT = {c: code_of(c) for c in range(52)} | {~c: _face_down(code_of(c)) for c in range(52)}


def loads(text: str) -> State:
    try:
        fmt, game, redeals, body = text.split(":", 3)
        if fmt != FORMAT:
            raise CorruptState(f"unknown state format {fmt!r}")
        rules = get_ruleset(game)
        fields = body.split(",")
        if len(fields) != len(rules.pile_ids):
            raise CorruptState(f"{game} has {len(rules.pile_ids)} piles, not {len(fields)}")
        piles = tuple(_pile(f) for f in fields)
        state = State(game, piles, int(redeals))
    except (ValueError, UnknownGame) as exc:
        if isinstance(exc, CorruptState):
            raise
        raise CorruptState(f"unreadable state: {exc}") from None
    if sum(len(p) for p in piles) != rules.cards or not 0 <= state.redeals <= (
        rules.max_redeals or 0
    ):
        raise CorruptState("the state does not hold a whole game")
    return state


_FACES = {text: card for card, text in _TEXT.items()}


def _pile(field: str) -> Pile:
    if len(field) % 2:
        raise CorruptState(f"pile {field!r} is not a run of card codes")
    pairs = iter(field)
    try:
        return tuple([_FACES[a + b] for a, b in zip(pairs, pairs)])
    except KeyError as exc:
        raise CorruptState(f"{exc.args[0]!r} is not a card") from None
