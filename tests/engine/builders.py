"""Build engine positions from readable text, and check single moves against the rules.

Notation, as in rules.md: card codes separated by spaces, each pile listed **bottom → top**.
That holds for the stock too, so a stock's *last* card is the next one dealt (the order of
``State`` and of ``Ruleset.full_view``). A face-down card is written in parentheses: ``(KH)``.

    position("quadrangle", f1="2H", t1="AC 9C", waste="5D", stock="KS QS")  # QS dealt next

Every pile not named is empty. Positions need not hold a whole deck: the engine checks that
only when reading a stored state back (``loads``). Games whose foundations are dealt (f1 in
Quadrangle, all of them in Corners and Patriarchs) need those piles given.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from app.engine import IllegalMove, Move, State, Step, get_ruleset
from app.engine.cards import code_of, parse_code
from app.engine.state import Pile


def cards(text: str) -> Pile:
    """Faces of ``"5C (AC) 6H"``: face-down cards (in parentheses) stored as ``~face``."""
    out: list[int] = []
    for token in text.split():
        if token.startswith("(") and token.endswith(")"):
            out.append(~parse_code(token[1:-1]))
        else:
            out.append(parse_code(token))
    return tuple(out)


def position(
    game: str, given: Mapping[str, str] | None = None, /, *, redeals: int = 0, **more: str
) -> State:
    """A state of ``game`` with the given piles (pile id → cards bottom → top): a mapping of
    them (for piles built in a loop) and/or keyword arguments."""
    piles = {**(given or {}), **more}
    rules = get_ruleset(game)
    unknown = sorted(set(piles) - set(rules.pile_ids))
    if unknown:
        raise ValueError(f"{game} has no pile {', '.join(unknown)}")
    return State(game, tuple(cards(piles.get(pid, "")) for pid in rules.pile_ids), redeals)


def show(state: State, pile_id: str) -> str:
    """One pile back in the notation above, e.g. ``"5C (AC) 6H"``."""
    pile = get_ruleset(state.game).pile(state, pile_id)
    return " ".join(code_of(c) if c >= 0 else f"({code_of(~c)})" for c in pile)


def moves(state: State) -> set[str]:
    """The legal moves of ``state`` in text form."""
    return {str(m) for m in get_ruleset(state.game).legal_moves(state)}


def play(state: State, notation: str) -> Step:
    """Assert that a move is legal (listed by ``legal_moves``, accepted by ``apply``); its step."""
    rules = get_ruleset(state.game)
    move = Move.parse(notation)
    assert move in rules.legal_moves(state), f"{notation} is missing from legal_moves"
    step = rules.step(state, move)
    assert step.before == state, "undo must go back to the state the move was made in"
    assert step.move == move
    assert rules.apply(state, move) == step.after
    return step


def refuse(state: State, notation: str, *words: str) -> str:
    """Assert that a move is refused with a player sentence holding ``words``; the message."""
    rules = get_ruleset(state.game)
    move = Move.parse(notation)
    assert move not in rules.legal_moves(state), f"{notation} is offered by legal_moves"
    with pytest.raises(IllegalMove) as refused:
        rules.apply(state, move)
    message = str(refused.value)
    assert_sentence(message, *words)
    return message


def assert_sentence(message: str, *words: str) -> None:
    """A message fit to show a player: a sentence (it may open with a card, ``10♦ …``)
    that names the reason."""
    first = message[:1]
    assert (first.isupper() or first.isdigit()) and message.endswith("."), message
    assert "None" not in message and "'" not in message.replace("'s ", ""), message
    for word in words:
        assert word.lower() in message.lower(), f"{word!r} not in {message!r}"
