"""Moves in a player's words: what the board announces after a step or an undo, and a finished
game's moves on its replay page. Only cards that are face up are ever named.

Each sentence is a :class:`~app.engine.reasons.Words` (a code, the English template and
parameters): the web says it in the player's language; ``str()`` of it is the English.
"""

from __future__ import annotations

from app.engine.cards import SUIT_SYMBOLS
from app.engine.layout import PileKind
from app.engine.moves import Move
from app.engine.reasons import N_, CardRef, CardsRef, Nn_, Param, RangeRef, Words
from app.engine.rules_view import RulesView
from app.engine.state import State, Step


def _counted(code: str, forms: tuple[str, str], n: int, **params: Param) -> Words:
    return Words(code, forms[0], {**params, "n": n}, forms[1], n)


def step_words(rules: RulesView, step: Step, auto: bool = False) -> list[Words]:
    """The step in a player's words, sentence by sentence: only cards that are face up after it
    are named. ``auto``: the auto-move preference made it."""
    move, before, after = step.move, step.before, step.after
    src, dst = rules.pile_index(move.source), rules.pile_index(move.target)
    said: list[Words]
    if move.source == "stock" and move.target == "waste":
        said = [
            Words(
                "dealt",
                N_("Dealt %(card)s to the waste."),
                {"card": CardRef(after.piles[dst][-1])},
            )
        ]
    elif move.source == "waste" and move.target == "stock":
        said = [
            _counted(
                "waste_turned",
                Nn_(
                    "Turned the waste over: %(n)s card is back in the stock.",
                    "Turned the waste over: %(n)s cards are back in the stock.",
                ),
                move.count,
            )
        ]
    else:
        moved = CardsRef(after.piles[dst][-move.count :])
        where: dict[str, Param] = {
            "cards": moved,
            "from": rules.pile_ref(src),
            "to": rules.pile_ref(dst),
        }
        if auto:
            said = [Words("auto_moved", N_("Auto-moved %(cards)s from %(from)s to %(to)s."), where)]
        else:
            said = [Words("moved", N_("Moved %(cards)s from %(from)s to %(to)s."), where)]
    for pid in step.changed:
        i = rules.pile_index(pid)
        kind = rules.kind(i)
        if kind not in (PileKind.TABLEAU, PileKind.RESERVE) or not after.piles[i]:
            continue
        top = after.piles[i][-1]
        if top < 0:
            continue
        card = CardRef(top)
        if i == src and len(before.piles[i]) == move.count:
            said.append(
                Words(
                    "refilled",
                    N_("%(pile)s was refilled with %(card)s."),
                    {"pile": rules.pile_ref(i), "card": card},
                )
            )
        elif i == src and before.piles[i][-move.count - 1] < 0:
            said.append(Words("turned_up", N_("%(card)s turned face up."), {"card": card}))
        elif i not in (src, dst):
            said.append(
                Words(
                    "filled",
                    N_("%(pile)s was filled with %(card)s."),
                    {"pile": rules.pile_ref(i), "card": card},
                )
            )
    return said


def describe_step(rules: RulesView, step: Step) -> str:
    """The step in English words."""
    return " ".join(str(w) for w in step_words(rules, step))


def undo_words(rules: RulesView, step: Step) -> Words:
    """An undo in a player's words; ``step`` goes from the state undone to the state restored."""
    move, after = step.move, step.after
    src = rules.pile_index(move.source)
    back = after.piles[src][-move.count :]
    return _counted(
        "took_back",
        Nn_(
            "Took back a move: %(cards)s is back on %(pile)s.",
            "Took back a move: %(cards)s are back on %(pile)s.",
        ),
        len(back),
        cards=CardsRef(back),
        pile=rules.pile_ref(src),
    )


def _face(card: int) -> int:
    return card if card >= 0 else ~card


def _foundation_label(rules: RulesView, pile_id: str, card: int) -> str:
    spec = rules.layout.piles[rules.layout.index[pile_id]]
    return spec.label or SUIT_SYMBOLS[_face(card) // 13]


def move_words_of(rules: RulesView, before: State, move: Move) -> Words:
    """One move of a finished game as a player says it: "7♦ to the ♦ foundation". Every card
    of a finished game may be named, face-down ones included."""
    if move.source == "stock":
        card = CardRef(_face(before.piles[rules.stock][-1]))
        return Words("replay_dealt", N_("Dealt %(card)s"), {"card": card})
    if move.target == "stock":
        return Words("replay_turned", N_("Turned the waste over"))
    src, dst = rules.pile_index(move.source), rules.pile_index(move.target)
    cards = [_face(c) for c in before.piles[src][-move.count :]]
    what: CardRef | RangeRef = (
        CardRef(cards[0]) if len(cards) == 1 else RangeRef(cards[0], cards[-1])
    )
    if rules.kind(dst) is PileKind.FOUNDATION:
        to = _foundation_label(rules, move.target, cards[0])
        if rules.kind(src) is PileKind.FOUNDATION:
            return Words(
                "replay_foundation_to_foundation",
                N_("%(cards)s from the %(from)s foundation to the %(to)s foundation"),
                {"cards": what, "from": _foundation_label(rules, move.source, cards[0]), "to": to},
            )
        return Words(
            "replay_to_foundation",
            N_("%(cards)s to the %(to)s foundation"),
            {"cards": what, "to": to},
        )
    onto = before.piles[dst]
    if onto:
        return Words(
            "replay_onto",
            N_("%(cards)s onto %(top)s"),
            {"cards": what, "top": CardRef(_face(onto[-1]))},
        )
    return Words(
        "replay_to_empty",
        N_("%(cards)s to the empty %(pile)s"),
        {"cards": what, "pile": rules.pile_ref(dst)},
    )


def replay_words_of(rules: RulesView, start: State, moves: list[str]) -> list[Words]:
    """Each move of a move log in words, from the deal ``start``."""
    out = []
    state = start
    for text in moves:
        move = Move.parse(text)
        out.append(move_words_of(rules, state, move))
        state = rules.apply(state, move)
    return out


def replay_words(rules: RulesView, start: State, moves: list[str]) -> list[str]:
    """Each move of a move log in English words."""
    return [str(w) for w in replay_words_of(rules, start, moves)]
