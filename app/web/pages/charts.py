"""Small charts drawn on the server as SVG (no JavaScript): a win rate game after game, runs of
wins, and how many moves wins took. Each comes with the same facts in words (its text
equivalent), shown under it and given to screen readers as the image's description."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from app.web import i18n
from app.web.i18n import N_

W, H = 320, 120  # the drawing's own units; it scales to its box
PAD_L, PAD_R, PAD_T, PAD_B = 34, 8, 8, 22


@dataclass(frozen=True, slots=True)
class Chart:
    """An SVG chart and its text equivalent."""

    key: str  # unique on its page: the ids of its title and description
    title: str
    text: str  # the chart's facts in words
    svg: Markup


def _svg(key: str, title: str, text: str, body: str) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" '
        f'aria-labelledby="{key}-t" aria-describedby="{key}-d">'
        f'<title id="{key}-t">{escape(title)}</title><desc id="{key}-d">{escape(text)}</desc>'
        f"{body}</svg>"
    )


def _axes(y_labels: Sequence[tuple[float, str]], x_first: str, x_last: str) -> str:
    parts = [
        f'<line class="axis" x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}"/>'
    ]
    for y, label in y_labels:
        parts.append(
            f'<line class="grid" x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}"/>'
            f'<text x="{PAD_L - 3}" y="{y + 3:.1f}" text-anchor="end">{escape(label)}</text>'
        )
    parts.append(f'<text x="{PAD_L}" y="{H - 5}">{escape(x_first)}</text>')
    parts.append(f'<text x="{W - PAD_R}" y="{H - 5}" text-anchor="end">{escape(x_last)}</text>')
    return "".join(parts)


def win_rate_chart(key: str, won: Sequence[bool]) -> Chart:
    """The win rate over the games so far, after each game."""
    n = len(won)
    title = i18n.gettext("Win rate, game after game")
    if not n:
        return Chart(key, title, i18n.gettext("No finished rated games yet."), Markup(""))
    rates, wins = [], 0
    for i, w in enumerate(won, 1):
        wins += w
        rates.append(wins / i)
    inner_w, inner_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def point(i: int, rate: float) -> str:
        x = PAD_L + (inner_w * i / (n - 1) if n > 1 else inner_w / 2)
        y = PAD_T + inner_h * (1 - rate)
        return f"{x:.1f},{y:.1f}"

    line = " ".join(point(i, r) for i, r in enumerate(rates))
    marks = [(PAD_T + inner_h * (1 - v), i18n.percent(v)) for v in (0.0, 0.5, 1.0)]
    first, last = i18n.say("game %(n)s", n=1), i18n.say("game %(n)s", n=n)
    body = _axes(marks, first, last) + f'<polyline class="series" points="{line}"/>'
    steps = sorted({max(1, round(n * k / 4)) for k in (1, 2, 3, 4)})
    said = "; ".join(
        i18n.say_n(
            "after %(n)s game: %(rate)s",
            "after %(n)s games: %(rate)s",
            i,
            rate=i18n.percent(rates[i - 1]),
        )
        for i in steps
    )
    # Two counts, each its own plural: "1 victoire en 1 partie classée terminée".
    text = i18n.say_n(
        "%(wins)s in %(n)s finished rated game. Win rate %(said)s.",
        "%(wins)s in %(n)s finished rated games. Win rate %(said)s.",
        n,
        wins=i18n.say_n("%(n)s win", "%(n)s wins", wins),
        said=said,
    )
    return Chart(key, title, text, _svg(key, title, text, body))


def streak_chart(key: str, streaks: Sequence[int]) -> Chart:
    """Every run of wins, in order, as a bar."""
    title = i18n.gettext("Runs of wins, in order")
    if not streaks:
        return Chart(key, title, i18n.gettext("No win yet."), Markup(""))
    shown = list(streaks[-40:])
    top = max(shown)
    inner_w, inner_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    slot = inner_w / len(shown)
    bars = []
    for i, s in enumerate(shown):
        h = inner_h * s / top
        bars.append(
            f'<rect class="series-bar" x="{PAD_L + i * slot + slot * 0.15:.1f}" '
            f'y="{PAD_T + inner_h - h:.1f}" width="{min(24.0, max(1.0, slot * 0.7)):.1f}" '
            f'height="{h:.1f}"/>'
        )
    marks = [(PAD_T + inner_h, "0"), (PAD_T, str(top))]
    body = _axes(marks, i18n.gettext("first"), i18n.gettext("latest")) + "".join(bars)
    listed = ", ".join(str(s) for s in shown)
    if len(streaks) > len(shown):
        text = i18n.say(
            "Runs of wins in a row (the latest %(shown)s of %(all)s): %(listed)s. Longest: "
            "%(longest)s.",
            shown=len(shown),
            all=len(streaks),
            listed=listed,
            longest=max(streaks),
        )
    else:
        text = i18n.say(
            "Runs of wins in a row: %(listed)s. Longest: %(longest)s.",
            listed=listed,
            longest=max(streaks),
        )
    return Chart(key, title, text, _svg(key, title, text, body))


def moves_histogram(key: str, moves: Sequence[int], title: str = N_("Moves per win")) -> Chart:
    """How many wins took how many moves, in up to eight equal bins (``title``: a message of
    the catalogs)."""
    title = i18n.gettext(title)
    if not moves:
        return Chart(key, title, i18n.gettext("No win yet."), Markup(""))
    low, high = min(moves), max(moves)
    bins = min(8, high - low + 1)
    size = max(1, -(-(high - low + 1) // bins))
    counts = [0] * bins
    for m in moves:
        counts[min(bins - 1, (m - low) // size)] += 1
    top = max(counts)
    inner_w, inner_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    slot = inner_w / bins
    bars, said = [], []
    for i, c in enumerate(counts):
        h = inner_h * c / top
        bars.append(
            f'<rect class="series-bar" x="{PAD_L + i * slot + 1:.1f}" '
            f'y="{PAD_T + inner_h - h:.1f}" width="{max(1.0, slot - 2):.1f}" height="{h:.1f}"/>'
        )
        a, b = low + i * size, low + (i + 1) * size - 1
        if c:
            span = str(a) if a == b else f"{a}–{b}"
            said.append(i18n.say("%(span)s moves: %(count)s", span=span, count=c))
    marks = [(PAD_T + inner_h, "0"), (PAD_T, str(top))]
    body = _axes(marks, str(low), str(low + bins * size - 1)) + "".join(bars)
    text = i18n.say_n(
        "%(n)s win by moves — %(said)s.",
        "%(n)s wins by moves — %(said)s.",
        len(moves),
        said="; ".join(said),
    )
    return Chart(key, title, text, _svg(key, title, text, body))
