"""The win summary: how a won game compares with the deal's records and with the player's own
other wins of the game. The records come from the deal's summary, the same one the deal page
shows (so whatever the deal page may not show yet, this does not show either)."""

from __future__ import annotations

from fastapi import Request

from app.services.game_views import GameView
from app.web import i18n
from app.web.pages.board import clock_text
from app.web.state import services_of


def win_comparison(request: Request, view: GameView, viewer: str | None) -> list[str]:
    """Lines for the owner's summary of a won game; none for anything else."""
    g = view.record
    if viewer is None or g.player_id != viewer or g.status != "won":
        return []
    deals = services_of(request).deals
    progress = services_of(request).progress
    lines = []
    deal = deals.summary(view.rules.slug, g.deal, viewer)
    best = deal.fewest_moves
    if best is not None:
        if best.id == g.id:
            lines.append(i18n.say("Fewest moves on this deal: yours, %(n)s.", n=g.moves))
        else:
            lines.append(
                i18n.say(
                    "Fewest moves on this deal: %(n)s, by %(player)s.",
                    n=best.moves,
                    player=best.player,
                )
            )
    fast = deal.fastest
    if fast is not None and fast.duration_ms is not None:
        if fast.id == g.id:
            lines.append(i18n.gettext("Fastest on this deal: you."))
        else:
            lines.append(
                i18n.say(
                    "Fastest on this deal: %(time)s, by %(player)s.",
                    time=clock_text(fast.duration_ms // 1000),
                    player=fast.player,
                )
            )
    own = progress.own_average(viewer, view.rules.slug, g.id)
    if own.wins and own.moves is not None:
        moves = i18n.decimal(own.moves, 0)
        if own.duration_ms is not None:
            lines.append(
                i18n.say_n(
                    "Your other win of %(game)s took %(moves)s moves in %(time)s on average.",
                    "Your other %(n)s wins of %(game)s took %(moves)s moves in %(time)s on "
                    "average.",
                    own.wins,
                    game=view.rules.name,
                    moves=moves,
                    time=clock_text(int(own.duration_ms) // 1000),
                )
            )
        else:
            lines.append(
                i18n.say_n(
                    "Your other win of %(game)s took %(moves)s moves on average.",
                    "Your other %(n)s wins of %(game)s took %(moves)s moves on average.",
                    own.wins,
                    game=view.rules.name,
                    moves=moves,
                )
            )
    else:
        lines.append(i18n.say("Your first win of %(game)s.", game=view.rules.name))
    return lines
