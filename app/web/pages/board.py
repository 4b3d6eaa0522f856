"""What the board templates may see: piles as the player is allowed to see them, nothing more.

The handler builds these from ``GameView.piles()`` (engine ``ShownPile``s), which masks
face-down and stock cards while a game is in play; templates never receive the engine state.
Squared piles carry only their top card (a count says how many lie below), fanned piles every
card, face-down ones as backs, so a fragment of a changed pile stays small.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup, escape

from app.engine import Card, Fan, Move, PileKind, Ruleset
from app.services.game_views import GameView
from app.web import i18n
from app.web.i18n import N_
from app.web.words import card_name, rank_index

_KIND_NOUN = {
    PileKind.STOCK: N_("Stock"),
    PileKind.WASTE: N_("Waste"),
    PileKind.FOUNDATION: N_("Foundation %(id)s"),
    PileKind.TABLEAU: N_("Pile %(id)s"),
    PileKind.RESERVE: N_("Reserve %(id)s"),
}


# One card's HTML by (code, language): at most 53 codes (a back is None) in each language.
_CARD_HTML: dict[tuple[str | None, str], Markup] = {}


def card_html(code: str | None, lang: str) -> Markup:
    """One card as drawn, in ``lang``: its suit (the CSS class that colours it and draws its
    suit), its corner index and the name a screen reader says; a face-down card (``None``) is
    a back and nothing else. Made once per card and language: a fragment of a fanned pile draws
    every card of it, and building each card in the template on every move was the largest
    part of rendering a move's fragment (bench/RESULTS.md, issue 26)."""
    key = (code, lang)
    html = _CARD_HTML.get(key)
    if html is None:
        with i18n.speaking(lang):
            if code is None:
                html = Markup('<li class="b" aria-label="{}"></li>').format(
                    i18n.gettext("face-down card")
                )
            else:
                card = Card.parse(code)
                html = Markup('<li class="{}" aria-label="{}">{}</li>').format(
                    code[1].lower(), card_name(card.face), rank_index(card.rank)
                )
        _CARD_HTML[key] = html
    return html


_OOB = ' hx-swap-oob="true"'


@dataclass(frozen=True, slots=True)
class PileView:
    id: str
    kind: str
    fanned: bool
    label: str  # the pile's accessible name, e.g. "Foundation f1 ♣, 5 cards"
    cards: Markup  # what is drawn (card_html): every card if fanned, else the top card only
    count: int  # how many cards the pile holds

    def html(self, oob: bool = False) -> Markup:
        """The pile as drawn on every board, replay and fragment; ``oob`` for an out-of-band
        swap. What it holds was decided by ``pile_views`` (a face-down card is a back and
        nothing else). Made here like each card, not by a template macro: a board move sends
        two or three piles, and a macro call cost more than the markup (bench/RESULTS.md)."""
        return Markup(
            f'<ol id="pile-{escape(self.id)}" class="pile {escape(self.kind)}'
            f'{" fanned" if self.fanned else ""}" data-count="{self.count:d}" '
            f'aria-label="{escape(self.label)}" tabindex="0"'
            f"{_OOB if oob else ''}>{self.cards}</ol>"
        )


@dataclass(frozen=True, slots=True)
class GameHeader:
    """What a page says about a game besides its piles and status: no card, no engine state."""

    id: str
    deal: int | None  # None while the number is sealed
    player_name: str
    rated: bool
    status: str

    @classmethod
    def of(cls, view: GameView) -> GameHeader:
        g = view.record
        return cls(g.id, view.deal_number, view.player_name, g.rated, g.status)


def pile_title(rules: Ruleset, pile_id: str) -> str:
    spec = rules.layout.piles[rules.layout.index[pile_id]]
    title = i18n.gettext(_KIND_NOUN[spec.kind])
    if spec.kind in (PileKind.STOCK, PileKind.WASTE):
        return title
    return title % {"id": pile_id} + (f" {spec.label}" if spec.label else "")


def pile_views(view: GameView, only: tuple[str, ...] | None = None) -> list[PileView]:
    piles = view.piles(only)
    lang = i18n.current_lang()
    out = []
    for spec in view.rules.layout.piles:
        if only is not None and spec.id not in only:
            continue
        shown = piles[spec.id]
        # A stock in play is only a count; cards are listed only once the game is over (and
        # only to a viewer who may see every card of the deal).
        whole = view.shows_everything
        codes: Sequence[str | None] = (
            shown.cards or () if spec.kind is not PileKind.STOCK or whole else ()
        )
        count = shown.count
        fanned = spec.fan is Fan.DOWN
        if spec.kind is PileKind.STOCK and count and not whole:
            drawn: Sequence[str | None] = (None,)  # one back stands for the whole stock
        elif fanned:
            drawn = codes
        else:
            drawn = codes[-1:]
        title = pile_title(view.rules, spec.id)
        label = (
            title
            if fanned
            else i18n.say_n("%(title)s, %(n)s card", "%(title)s, %(n)s cards", count, title=title)
        )
        out.append(
            PileView(
                id=spec.id,
                kind=spec.kind.value,
                fanned=fanned,
                label=label,
                # Each card is markup already: joined as text, not escaped one by one again.
                cards=Markup("".join([card_html(c, lang) for c in drawn])),
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
            caption = "↺" if rules.max_redeals else i18n.pgettext("empty pile", "stock")
        elif spec.kind is PileKind.WASTE:
            caption = i18n.pgettext("empty pile", "waste")
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


def _elapsed_seconds(view: GameView) -> int:
    """The active time: the server's count up to the last action, plus the current pause up to
    the idle cap while the game is in play."""
    g = view.record
    if g.duration_ms is not None:
        return g.duration_ms // 1000
    return (g.active_ms + min(view.idle_ms(), view.idle_cap_ms)) // 1000


def duration_words(seconds: int) -> str:
    """A span in words, in the player's language (Babel's units): "2 minutes", "90 Sekunden"."""
    return i18n.duration(seconds)


# The clock's face: under an hour, from an hour. The board page is sent these patterns, so the
# clock it runs between two answers reads as the server's (h, m: a number; mm, ss: two digits).
CLOCK_FORMATS = ("m:ss", "h:mm:ss")
_CLOCK_FIELD = re.compile(r"h|mm|m|ss")
# The same patterns as format strings, made once (the clock is written with every board move).
_CLOCK_FACES = tuple(_CLOCK_FIELD.sub(lambda m: "{" + m.group() + "}", f) for f in CLOCK_FORMATS)


def clock_text(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return _CLOCK_FACES[hours > 0].format(h=hours, m=minutes, mm=f"{minutes:02d}", ss=f"{secs:02d}")


def moves_data(view: GameView, traps: Sequence[Move] = ()) -> Markup:
    """The legal moves as the board's script reads them: ``[from, to, count]`` each, so that the
    page never parses the engine's notation. A fourth item says more: ``"deal"`` for what the
    Deal button (or a tap on the stock) does now, a deal or the redeal as the service decides
    it (``Ruleset.deal_move``; the page sends "deal" and uses this only to slide the cards and
    to take the waste dropped on the stock for the Deal button); ``"trap"`` for a move after
    which no legal move is left (asked about first). JSON safe in a single-quoted attribute."""
    trapped = set(traps)
    legal = view.legal_moves
    deal = view.rules.deal_move(view.state) if legal else None
    data: list[list[str | int]] = []
    for m in legal:
        note = ["deal"] if m == deal else ["trap"] if m in trapped else []
        data.append([m.source, m.target, m.count, *note])
    return htmlsafe_json_dumps(data, separators=(",", ":"))


def game_over_text(home: int, cards: int, moves: str) -> str:
    """How far a lost game got. The count of cards home is the message's plural: "1 carte sur
    52 a atteint les fondations", never "1 cartes … ont" (French is singular for 0 and 1)."""
    return i18n.say_n(
        "%(n)s of %(cards)s cards reached the foundations in %(moves)s.",
        "%(n)s of %(cards)s cards reached the foundations in %(moves)s.",
        home,
        cards=i18n.number(cards),
        moves=moves,
    )


def status_context(
    view: GameView,
    owner: bool = True,
    compare: list[str] | None = None,
    watching: bool = False,
) -> dict[str, Any]:
    """What the status bar and the end-of-game panel show (components/status.html), and no
    more: the bar is rendered again with every board move. ``owner``: the viewer is the game's
    player (someone else, a spectator say, is not offered to play "this deal again").
    ``watching``: the viewer watches someone else's game on its own page, which asks for the
    board every few seconds while the game is in play."""
    g, rules, state = view.record, view.rules, view.state
    base = rules.base_rank(state)
    redeals = rules.redeals_left(state)
    # Each fact with the width of its longest value (in digits), so that the line of facts
    # never rewraps as numbers grow: the table below it never moves.
    facts: list[tuple[str, str, int]] = [
        (N_("Moves"), str(g.moves), 3),
        (
            N_("Foundations"),
            f"{rules.on_foundations(state)}/{rules.cards}",
            2 * len(str(rules.cards)) + 1,
        ),
    ]
    if rules.stock >= 0:
        facts.append((N_("Stock"), str(view.stock_count), len(str(rules.cards))))
    if redeals is not None:
        facts.append((N_("Redeals left"), str(redeals), 1))
    if rules.shows_base_rank:
        facts.append((N_("Base"), "—" if base is None else rank_index(base), 2))
    elapsed = _elapsed_seconds(view)
    summary = None
    if view.finished:
        won = g.status == "won"
        moves = i18n.say_n("%(n)s move", "%(n)s moves", g.moves)
        summary = {
            # The solver's verdict on the deal (None for masked views: a spoiler) and, for a
            # winnable deal, its solution as a replay.
            "winnable": view.deal_winnable,
            "solution_path": f"/games/{g.id}/solution"
            if view.deal_winnable and view.solution_known
            else None,
            # Where the game slipped (issue #22): for whoever sees the game whole, and not
            # after a win (nothing slipped; the question would only cost a search).
            "analysis_path": None if view.masked or won else f"/games/{g.id}/analysis",
            "title": i18n.gettext("You won!") if won else i18n.gettext("Game over"),
            # A win against the deal's records and the player's own (app/web/pages/wins.py).
            "compare": compare or [],
            "text": (
                i18n.say("%(moves)s in %(time)s.", moves=moves, time=clock_text(elapsed))
                if won
                else game_over_text(rules.on_foundations(state), rules.cards, moves)
            ),
        }
    # No legal move left, yet the last step can be undone: the player decides (contract v2).
    # (A spectator's view lists no moves at all: which moves are legal could tell a card drawn
    # face down for them.) Its Undo and End buttons, like the Finish offer, are the player's
    # alone: anyone else watching would only be refused.
    stuck = owner and not view.finished and not view.legal_moves and view.faces is None
    traps = [] if view.finished else rules.dead_ends(state, view.legal_moves)
    finish = None if view.finished or not owner else rules.finish_moves(state, view.legal_moves)
    return {
        "game_id": g.id,
        "slug": rules.slug,
        "deal": view.deal_number,
        "status": g.status,
        "version": g.version,
        "can_undo": g.can_undo and not view.finished,
        # Why Undo is greyed, for the player who presses it anyway.
        "undo_why": (
            ""
            if g.can_undo or view.finished
            else i18n.gettext("There is no move to take back yet.")
            if g.moves == 0
            else i18n.gettext(
                "Undo is off: your last move turned up a card you had not seen, and a card once "
                "seen cannot be unseen."
            )
        ),
        "moves_data": moves_data(view, traps),
        "stuck": stuck,
        "can_finish": bool(finish),
        "facts": facts,
        "elapsed": elapsed,
        # Where the running clock stops: the active time at the last action plus the idle cap.
        "clock_until": (g.active_ms + view.idle_cap_ms) // 1000,
        "elapsed_text": clock_text(elapsed),
        "running": g.first_move_at is not None and not view.finished,
        "summary": summary,
        "owner": owner,
        "share_path": None if view.number_hidden else f"/deal/{rules.slug}/{g.deal}",
        # While the deal is sealed a finished game is shown as if in play, and says why.
        "sealed": None if view.seal is None else view.seal.opens,
        # A spectator's page asks for the board every few seconds while the game is played
        # (the answer is 204 while nothing has changed); the path carries the version shown.
        "watch_path": (
            f"/games/{g.id}/board?version={g.version}"
            if watching and g.status == "playing"
            else None
        ),
    }
