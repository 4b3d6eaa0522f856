"""Moves in a player's words: what the board announces after a step or an undo, and a finished
game's moves on its replay page. Only cards that are face up are ever named."""

from __future__ import annotations

from app.engine.cards import SUIT_SYMBOLS, label_of
from app.engine.layout import PileKind
from app.engine.moves import Move
from app.engine.rules_view import RulesView
from app.engine.state import State, Step


def _cards_text(cards: tuple[int, ...]) -> str:
    if len(cards) == 1:
        return label_of(cards[0])
    return f"{len(cards)} cards, {label_of(cards[0])} to {label_of(cards[-1])},"


def describe_step(rules: RulesView, step: Step) -> str:
    """The step in a player's words: only cards that are face up after it are named."""
    move, before, after = step.move, step.before, step.after
    src, dst = rules.pile_index(move.source), rules.pile_index(move.target)
    if move.source == "stock" and move.target == "waste":
        text = f"Dealt {label_of(after.piles[dst][-1])} to the waste."
    elif move.source == "waste" and move.target == "stock":
        text = f"Turned the waste over: {move.count} cards are back in the stock."
    else:
        moved = after.piles[dst][-move.count :]
        text = f"Moved {_cards_text(moved)} from {rules.pile_name(src)} to {rules.pile_name(dst)}."
    notes = []
    for pid in step.changed:
        i = rules.pile_index(pid)
        kind = rules.kind(i)
        if kind not in (PileKind.TABLEAU, PileKind.RESERVE) or not after.piles[i]:
            continue
        top = after.piles[i][-1]
        if top < 0:
            continue
        if i == src and len(before.piles[i]) == move.count:
            notes.append(f"{rules.pile_name(i).capitalize()} was refilled with {label_of(top)}.")
        elif i == src and before.piles[i][-move.count - 1] < 0:
            notes.append(f"{label_of(top)} turned face up.")
        elif i not in (src, dst):
            notes.append(f"{rules.pile_name(i).capitalize()} was filled with {label_of(top)}.")
    return " ".join([text, *notes])


def describe_undo(rules: RulesView, step: Step) -> str:
    """An undo in a player's words; ``step`` goes from the state undone to the state restored."""
    move, after = step.move, step.after
    src = rules.pile_index(move.source)
    back = after.piles[src][-move.count :]
    verb = "is" if len(back) == 1 else "are"
    return f"Took back a move: {_cards_text(back)} {verb} back on {rules.pile_name(src)}."


def _face(card: int) -> int:
    return card if card >= 0 else ~card


def _foundation_words(rules: RulesView, pile_id: str, card: int) -> str:
    spec = rules.layout.piles[rules.layout.index[pile_id]]
    return f"the {spec.label or SUIT_SYMBOLS[_face(card) // 13]} foundation"


def move_words(rules: RulesView, before: State, move: Move) -> str:
    """One move of a finished game as a player says it: "7♦ to the ♦ foundation". Every card
    of a finished game may be named, face-down ones included."""
    if move.source == "stock":
        return f"Dealt {label_of(_face(before.piles[rules.stock][-1]))}"
    if move.target == "stock":
        return "Turned the waste over"
    src, dst = rules.pile_index(move.source), rules.pile_index(move.target)
    cards = [_face(c) for c in before.piles[src][-move.count :]]
    what = label_of(cards[0]) if len(cards) == 1 else f"{label_of(cards[0])}–{label_of(cards[-1])}"
    if rules.kind(src) is PileKind.FOUNDATION:
        what = f"{what} from {_foundation_words(rules, move.source, cards[0])}"
    if rules.kind(dst) is PileKind.FOUNDATION:
        return f"{what} to {_foundation_words(rules, move.target, cards[0])}"
    onto = before.piles[dst]
    if onto:
        return f"{what} onto {label_of(_face(onto[-1]))}"
    return f"{what} to the empty {rules.pile_name(dst)}"


def replay_words(rules: RulesView, start: State, moves: list[str]) -> list[str]:
    """Each move of a move log in words, from the deal ``start``."""
    out = []
    state = start
    for text in moves:
        move = Move.parse(text)
        out.append(move_words(rules, state, move))
        state = rules.apply(state, move)
    return out
