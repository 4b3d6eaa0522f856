"""What the board templates may see: piles as the player is allowed to see them, nothing more.

The handler builds these from ``GameView.piles()``, which masks face-down and stock cards while
a game is in play; templates never receive the engine state itself. Squared piles carry only
their top card (a count says how many lie below), fanned piles every card, face-down ones as
backs, so a fragment of a changed pile stays small.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup

from app.engine import Fan, Move, PileKind, Ruleset, State, Step
from app.engine.cards import RANK_LABELS, RANKS, label_of, name_of, parse_code
from app.services.games import GameView

# Games where a run of several cards moves together (rules.md §3, I3).
RUN_GAMES = frozenset({"quadruple-interchange"})
_KIND_NOUN = {
    PileKind.STOCK: "Stock",
    PileKind.WASTE: "Waste",
    PileKind.FOUNDATION: "Foundation",
    PileKind.TABLEAU: "Pile",
    PileKind.RESERVE: "Reserve",
}


@dataclass(frozen=True, slots=True)
class CardView:
    """One card as drawn: ``code`` is None for a face-down card, and then nothing else is set."""

    code: str | None
    suit: str = ""  # c, d, h or s: the CSS class that colours the card and draws its suit
    rank: str = ""  # the corner index: A 2 … 10 J Q K
    name: str = "face-down card"  # what a screen reader says

    @classmethod
    def of(cls, code: str | None) -> CardView:
        if code is None:
            return cls(None)
        return cls(code, code[1].lower(), RANK_LABELS[RANKS.index(code[0])], card_name(code))


@dataclass(frozen=True, slots=True)
class PileView:
    id: str
    kind: str
    fanned: bool
    label: str  # the pile's accessible name, e.g. "Foundation f1 ♣, 5 cards"
    shown: tuple[CardView, ...]  # what is drawn: every card if fanned, else the top card only
    count: int  # how many cards the pile holds

    @property
    def top(self) -> CardView | None:
        return self.shown[-1] if self.shown else None


def card_name(code: str) -> str:
    return name_of(parse_code(code))


def pile_title(rules: Ruleset, pile_id: str) -> str:
    spec = rules.layout.piles[rules.layout.index[pile_id]]
    noun = _KIND_NOUN[spec.kind]
    if spec.kind in (PileKind.STOCK, PileKind.WASTE):
        return noun
    return f"{noun} {pile_id}" + (f" {spec.label}" if spec.label else "")


def pile_views(view: GameView, only: tuple[str, ...] | None = None) -> list[PileView]:
    piles: dict[str, Any] = view.piles()
    out = []
    for spec in view.rules.layout.piles:
        if only is not None and spec.id not in only:
            continue
        shown = piles[spec.id]
        # A stock in play is only a count; cards are listed only once the game is over (and
        # only to a viewer who may see every card of the deal).
        whole = view.shows_everything
        codes: list[str | None] = (
            shown.get("cards", []) if spec.kind is not PileKind.STOCK or whole else []
        )
        count = int(shown.get("count", len(codes)))
        fanned = spec.fan is Fan.DOWN
        if spec.kind is PileKind.STOCK and count and not whole:
            drawn: list[str | None] = [None]  # one back stands for the whole stock
        elif fanned:
            drawn = codes
        else:
            drawn = codes[-1:]
        title = pile_title(view.rules, spec.id)
        label = title if fanned else f"{title}, {count} card{'s' * (count != 1)}"
        out.append(
            PileView(
                id=spec.id,
                kind=spec.kind.value,
                fanned=fanned,
                label=label,
                shown=tuple(CardView.of(c) for c in drawn),
                count=count,
            )
        )
    return out


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def layout_css(rules: Ruleset) -> Markup:
    """Where each pile sits on the table grid, and the caption an empty pile shows.

    Sent once with the page, so that a pile's fragment need not repeat its position.
    """
    rules_css = []
    for spec in rules.layout.piles:
        if spec.kind is PileKind.STOCK:
            caption = "↺" if rules.max_redeals else "stock"
        else:
            caption = spec.label or spec.id
        rules_css.append(
            f"#pile-{spec.id}{{grid-area:{spec.row + 1}/{spec.col + 1}}}"
            f'#pile-{spec.id}::before{{content:{_css_string(caption)}/""}}'
        )
    rules_css.append(_folded_css(rules))
    # The labels are the engine's own constants; nothing a player typed reaches this block.
    return Markup("\n".join(rules_css))


FOLD_ABOVE = 6  # tables wider than this many columns fold in two for large cards on a phone


def _folded_css(rules: Ruleset) -> str:
    """Large cards on a narrow screen: a wide table folds each row in two, so the cards can be
    twice as wide (the right half of a row goes under its left half)."""
    cols = rules.layout.cols
    if cols <= FOLD_ABOVE:
        return ""
    half = (cols + 1) // 2
    cells = [f".pref-large .table{{--cols:{half}!important}}"]
    for spec in rules.layout.piles:
        same_row = [p.col for p in rules.layout.piles if p.row == spec.row]
        first, span = min(same_row), max(same_row) - min(same_row) + 1
        if span <= half:  # the row fits as it is: keep it on one line, centred
            row, col = 2 * spec.row, spec.col - first + (half - span) // 2
        else:
            row, col = 2 * spec.row + (spec.col >= half), spec.col % half
        cells.append(f".pref-large #pile-{spec.id}{{grid-area:{row + 1}/{col + 1}}}")
    return "@media (max-width:40rem){" + "".join(cells) + "}"


def pile_choices(rules: Ruleset) -> list[tuple[str, str]]:
    """Every pile as (id, name), for the move form's from/to lists."""
    return [(p.id, pile_title(rules, p.id)) for p in rules.layout.piles]


def _elapsed_seconds(view: GameView) -> int:
    g = view.record
    if g.duration_ms is not None:
        return g.duration_ms // 1000
    if g.first_move_at is None:
        return 0
    end = g.finished_at or datetime.now(UTC)
    start = g.first_move_at
    if start.tzinfo is None:  # SQLite hands back naive UTC datetimes
        start = start.replace(tzinfo=UTC)
    if end.tzinfo is None:
        end = end.replace(tzinfo=UTC)
    return max(0, int((end - start).total_seconds()))


def clock_text(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def status_context(view: GameView) -> dict[str, Any]:
    g, rules, state = view.record, view.rules, view.state
    base = rules.base_rank(state)
    redeals = rules.redeals_left(state)
    facts: list[tuple[str, str]] = [
        ("Moves", str(g.moves)),
        ("Foundations", f"{rules.on_foundations(state)}/{rules.cards}"),
    ]
    if rules.stock >= 0:
        facts.append(("Stock", str(len(state.piles[rules.stock]))))
    if redeals is not None:
        facts.append(("Redeals left", str(redeals)))
    if base is not None and rules.slug != "quadruple-interchange":
        facts.append(("Base", RANK_LABELS[base - 1]))
    elapsed = _elapsed_seconds(view)
    summary = None
    if view.finished:
        won = g.status == "won"
        moves = f"{g.moves} move{'s' * (g.moves != 1)}"
        summary = {
            "title": "You won!" if won else "Game over",
            "text": (
                f"{moves} in {clock_text(elapsed)}."
                if won
                else f"{rules.on_foundations(state)} of {rules.cards} cards reached the "
                f"foundations in {moves}."
            ),
        }
    return {
        "game_id": g.id,
        "slug": rules.slug,
        "deal": g.deal,
        "status": g.status,
        "version": g.version,
        "moves": g.moves,
        "undos": g.undos,
        "can_undo": g.can_undo and not view.finished,
        "on_foundations": rules.on_foundations(state),
        "cards": rules.cards,
        "redeals_left": redeals,
        "base_rank": base,
        "legal_moves": [str(m) for m in view.legal_moves],
        "legal": " ".join(str(m) for m in view.legal_moves),
        "facts": facts,
        "elapsed": elapsed,
        "elapsed_text": clock_text(elapsed),
        "running": g.first_move_at is not None and not view.finished,
        "finished": view.finished,
        "summary": summary,
        "share_path": f"/deal/{rules.slug}/{g.deal}",
    }


# -- words for what just happened (the aria-live announcement) ---------------------------------


def _cards_text(cards: tuple[int, ...]) -> str:
    if len(cards) == 1:
        return label_of(cards[0])
    return f"{len(cards)} cards, {label_of(cards[0])} to {label_of(cards[-1])},"


def describe_move(rules: Ruleset, step: Step) -> str:
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


def describe_undo(rules: Ruleset, step: Step) -> str:
    move, after = step.move, step.after
    src = rules.pile_index(move.source)
    back = after.piles[src][-move.count :]
    verb = "is" if len(back) == 1 else "are"
    return f"Took back a move: {_cards_text(back)} {verb} back on {rules.pile_name(src)}."


def auto_move_candidate(rules: Ruleset, state: State, legal: list[Move], keep: str) -> Move | None:
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
