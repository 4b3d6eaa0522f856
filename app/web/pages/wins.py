"""The win summary: how a won game compares with the deal's records and with the player's own
other wins of the game. The records come from the deal's summary, the same one the deal page
shows (so whatever the deal page may not show yet, this does not show either)."""

from __future__ import annotations

from fastapi import Request

from app.services.game_views import GameView
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
            lines.append(f"Fewest moves on this deal: yours, {g.moves}.")
        else:
            lines.append(f"Fewest moves on this deal: {best.moves}, by {best.player}.")
    fast = deal.fastest
    if fast is not None and fast.duration_ms is not None:
        if fast.id == g.id:
            lines.append("Fastest on this deal: you.")
        else:
            lines.append(
                f"Fastest on this deal: {clock_text(fast.duration_ms // 1000)}, by {fast.player}."
            )
    own = progress.own_average(viewer, view.rules.slug, g.id)
    if own.wins and own.moves is not None:
        time = (
            f" in {clock_text(int(own.duration_ms) // 1000)}" if own.duration_ms is not None else ""
        )
        lines.append(
            f"Your other {own.wins} win{'s' * (own.wins != 1)} of {view.rules.name} took "
            f"{own.moves:.0f} moves{time} on average."
        )
    else:
        lines.append(f"Your first win of {view.rules.name}.")
    return lines
