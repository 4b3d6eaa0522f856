"""What the interface may do for the player, decided by the rules alone: the Deal button's move,
the auto-move preference, auto-finish, and the warning before a choice that ends the game.

None of this is a rule of the games (rules.md §0: nothing goes to a foundation by itself); it
lives in the engine because each answer depends only on the rules and the cards, and the web
layer must not read the engine's card encoding to work it out.
"""

from __future__ import annotations

from app.engine.layout import PileKind
from app.engine.moves import Move
from app.engine.rules_view import RulesView
from app.engine.state import State

DEAL = Move("stock", "waste")


def deal_move(rules: RulesView, state: State) -> Move:
    """The Deal button: a redeal when one is due and allowed, else a card from the stock (which
    the engine refuses in a player's words when there is none, or no stock at all)."""
    if rules.stock >= 0 and rules.waste >= 0:
        redeal = rules.redeal_moves(state)
        if redeal:
            return redeal[0]
    return DEAL


def auto_move(rules: RulesView, state: State, legal: list[Move], keep: str = "") -> Move | None:
    """A card the auto-move preference may send to a foundation, or None.

    Only a card with exactly one foundation to go to, and never to start an empty foundation
    (base-rank and Ace choices are the player's, rules.md §2 Q1, §6 P6), never a card from a
    foundation (Patriarchs' transfers), and never the card on ``keep``, the pile the player
    just moved to: auto-move does not pull back what the player just placed.
    """
    targets: dict[str, list[Move]] = {}
    for m in legal:
        if m.count != 1 or m.source in (keep, "stock"):
            continue
        if rules.kind(rules.pile_index(m.target)) is not PileKind.FOUNDATION:
            continue
        if rules.kind(rules.pile_index(m.source)) is PileKind.FOUNDATION:
            continue
        targets.setdefault(m.source, []).append(m)
    for moves in targets.values():
        if len(moves) == 1 and state.piles[rules.pile_index(moves[0].target)]:
            return moves[0]
    return None


def finish_moves(rules: RulesView, state: State, legal: list[Move]) -> list[Move] | None:
    """The moves that finish the game when every card left can go up without a choice: no
    card is hidden (face down or in the stock) and sending cards to the foundations, one after
    another, wins. None when that is not so. Looked at only once nothing is hidden."""
    if not legal or (rules.stock >= 0 and state.piles[rules.stock]):
        return None
    if any(c < 0 for pile in state.piles for c in pile):
        return None
    moves: list[Move] = []
    for _ in range(rules.cards):
        if rules.is_won(state):
            return moves
        up = [
            m
            for m in rules.legal_moves(state)
            if rules.kind(rules.pile_index(m.target)) is PileKind.FOUNDATION
            and rules.kind(rules.pile_index(m.source)) is not PileKind.FOUNDATION
        ]
        if not up:
            return None
        moves.append(up[0])
        state = rules.apply(state, up[0])
    return moves if rules.is_won(state) else None


def dead_ends(rules: RulesView, state: State, legal: list[Move]) -> list[Move]:
    """The base choices (Castle's End, rules.md §5 E1) after which no legal move is left, so the
    board can warn before one is made. Only while the base is unchosen, and only in a game
    whose cards are all face up: looking one move ahead must reveal nothing."""
    if not rules.all_face_up or rules.base_rank(state) is not None:
        return []
    return [m for m in legal if not rules.legal_moves(rules.apply(state, m))]
