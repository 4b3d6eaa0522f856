"""The browser's pages and their HTMX fragments: cookies, CSRF-checked forms, templates."""

from app.web.pages import (
    accounts,
    coach,
    competition,
    home,
    live,
    play,
    prefs,
    rooms,
    rules,
    stats,
)

__all__ = [
    "accounts",
    "coach",
    "competition",
    "home",
    "live",
    "play",
    "prefs",
    "rooms",
    "rules",
    "stats",
]
