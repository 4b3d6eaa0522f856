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

from app.db.models import as_utc
from app.engine import Fan, Move, PileKind, Ruleset, State, Step
from app.engine.cards import RANK_LABELS, RANKS, SUIT_SYMBOLS, label_of, name_of, parse_code
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
    # Rows above the last hold squared piles: a card high each, whatever they hold, so that no
    # row ever changes the height of another (the table never moves under the pointer).
    rows = rules.layout.rows
    fixed = f"repeat({rows - 1},var(--card-h)) " if rows > 1 else ""
    rules_css.append(f"#table{{grid-template-rows:{fixed}auto}}")
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
    cells = [f".pref-large .table{{--cols:{half}!important;grid-template-rows:none!important}}"]
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


def _idle_ms(view: GameView) -> int:
    """How long the game in play has waited since its last action (0 before the first move)."""
    g = view.record
    if g.first_move_at is None or view.finished:
        return 0
    last = as_utc(g.updated_at)
    assert last is not None
    return max(0, int((datetime.now(UTC) - last).total_seconds() * 1000))


def _elapsed_seconds(view: GameView) -> int:
    """The active time: the server's count up to the last action, plus the current pause up to
    the idle cap while the game is in play."""
    g = view.record
    if g.duration_ms is not None:
        return g.duration_ms // 1000
    return (g.active_ms + min(_idle_ms(view), view.idle_cap_ms)) // 1000


def duration_words(seconds: int) -> str:
    if seconds % 60 == 0:
        return f"{seconds // 60} minute{'s' * (seconds != 60)}"
    return f"{seconds} second{'s' * (seconds != 1)}"


def clock_text(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


# Games with every card face up: looking one move ahead reveals nothing.
OPEN_GAMES = frozenset({"castles-end"})


def dead_ends(rules: Ruleset, state: State, legal: list[Move]) -> list[Move]:
    """The base choices (Castle's End, rules.md §5 E1) after which no legal move is left, so the
    board can warn before one is made. Only while the base is unchosen, and only in a game
    whose cards are all face up."""
    if rules.slug not in OPEN_GAMES or rules.base_rank(state) is not None:
        return []
    return [m for m in legal if not rules.legal_moves(rules.apply(state, m))]


def finish_moves(rules: Ruleset, state: State, legal: list[Move]) -> list[Move] | None:
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


def status_context(view: GameView) -> dict[str, Any]:
    g, rules, state = view.record, view.rules, view.state
    base = rules.base_rank(state)
    redeals = rules.redeals_left(state)
    # Each fact with the width of its longest value (in digits), so that the line of facts
    # never rewraps as numbers grow: the table below it never moves.
    facts: list[tuple[str, str, int]] = [
        ("Moves", str(g.moves), 3),
        (
            "Foundations",
            f"{rules.on_foundations(state)}/{rules.cards}",
            2 * len(str(rules.cards)) + 1,
        ),
    ]
    if rules.stock >= 0:
        facts.append(("Stock", str(len(state.piles[rules.stock])), len(str(rules.cards))))
    if redeals is not None:
        facts.append(("Redeals left", str(redeals), 1))
    if rules.slug in OPEN_GAMES or (base is not None and rules.slug != "quadruple-interchange"):
        facts.append(("Base", "—" if base is None else RANK_LABELS[base - 1], 2))
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
    # No legal move left, yet the last step can be undone: the player decides (contract v2).
    stuck = not view.finished and not view.legal_moves
    traps = [] if view.finished else dead_ends(rules, state, view.legal_moves)
    finish = None if view.finished else finish_moves(rules, state, view.legal_moves)
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
        "stuck": stuck,
        "can_finish": bool(finish),
        "traps": " ".join(str(m) for m in traps),
        "facts": facts,
        "elapsed": elapsed,
        # The client's clock goes on from the active time at the last action, for at most the
        # idle cap: the same count the server keeps.
        "active": g.active_ms // 1000,
        "idle": _idle_ms(view) // 1000,
        "cap": view.idle_cap_ms // 1000,
        "cap_text": duration_words(view.idle_cap_ms // 1000),
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


# -- a replay's moves in a player's words -------------------------------------------------------


def _suit_of(card: int) -> str:
    return SUIT_SYMBOLS[(card if card >= 0 else ~card) // 13]


def _foundation_words(rules: Ruleset, pile_id: str, card: int) -> str:
    spec = rules.layout.piles[rules.layout.index[pile_id]]
    return f"the {spec.label or _suit_of(card)} foundation"


def move_words(rules: Ruleset, before: State, move: Move) -> str:
    """One move of a finished game as a player says it: "7♦ to the ♦ foundation"."""
    if move.source == "stock":
        top = before.piles[rules.stock][-1]
        return f"Dealt {label_of(top if top >= 0 else ~top)}"
    if move.target == "stock":
        return "Turned the waste over"
    src, dst = rules.pile_index(move.source), rules.pile_index(move.target)
    cards = [c if c >= 0 else ~c for c in before.piles[src][-move.count :]]
    what = label_of(cards[0]) if len(cards) == 1 else f"{label_of(cards[0])}–{label_of(cards[-1])}"
    if rules.kind(src) is PileKind.FOUNDATION:
        what = f"{what} from {_foundation_words(rules, move.source, cards[0])}"
    if rules.kind(dst) is PileKind.FOUNDATION:
        return f"{what} to {_foundation_words(rules, move.target, cards[0])}"
    onto = before.piles[dst]
    if onto:
        return f"{what} onto {label_of(onto[-1] if onto[-1] >= 0 else ~onto[-1])}"
    return f"{what} to the empty {rules.pile_name(dst)}"


def replay_words(rules: Ruleset, start: State, moves: list[str]) -> list[str]:
    out = []
    state = start
    for text in moves:
        move = Move.parse(text)
        out.append(move_words(rules, state, move))
        state = rules.apply(state, move)
    return out
