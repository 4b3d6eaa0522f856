"""Jinja2 set-up, the player's display preferences, and the one way pages are rendered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from app.config import PROJECT_DIR
from app.engine import GAMES
from app.web.http.csrf import session_token
from app.web.http.newcomers import challenge_for
from app.web.pages.board import layout_css
from app.web.state import settings_of

templates = Jinja2Templates(directory=PROJECT_DIR / "templates")
# layout_css(rules): the table grid of a game, for every page that draws a board.
templates.env.globals.update(games=GAMES, layout_css=layout_css)

PREFS_COOKIE = "ph_prefs"
PREFS_MAX_AGE = 400 * 24 * 3600
# Preference flag → the class it puts on <body> (auto-move changes play, not looks).
PREF_FLAGS = {
    "auto": "",
    "four": "pref-four",
    "large": "pref-large",
    "sound": "pref-sound",
    "dark": "theme-dark",
    "back-red": "back-red",
    "back-gold": "back-gold",
}
THEMES = {
    "light": "Light: a green table in a light room",
    "dark": "Dark: a dark table, a dark room",
}
CARD_BACKS = {"blue": "Blue", "red": "Red", "gold": "Gold"}
# A game's first-visit guide, once dismissed, is remembered as "guide-<slug>".
GUIDE_FLAGS = {f"guide-{slug}" for slug in GAMES}


@dataclass(frozen=True, slots=True)
class Prefs:
    """Display and play preferences, kept in a plain cookie (nothing secret in it) and, for a
    browser with a player, on the account (``player.prefs``), which wins: it follows the player
    to every device.

    ``auto``: send cards to the foundations automatically (off by default); ``four``: the
    four-colour deck; ``large``: large cards; ``sound``: sounds (off by default); ``dark``: the
    dark theme; ``back-red`` / ``back-gold``: the card back (blue otherwise); ``guide-<slug>``:
    the game's first-visit guide has been read.
    """

    flags: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, raw: str | None) -> Prefs:
        known = PREF_FLAGS.keys() | GUIDE_FLAGS
        return cls(frozenset(f for f in (raw or "").split(".") if f in known))

    @property
    def auto(self) -> bool:
        return "auto" in self.flags

    @property
    def theme(self) -> str:
        return "dark" if "dark" in self.flags else "light"

    @property
    def back(self) -> str:
        return next((f[5:] for f in sorted(self.flags) if f.startswith("back-")), "blue")

    def guide_seen(self, slug: str) -> bool:
        return f"guide-{slug}" in self.flags

    @property
    def classes(self) -> str:
        return " ".join(sorted(PREF_FLAGS[f] for f in self.flags if PREF_FLAGS.get(f)))

    def cookie(self) -> str:
        return ".".join(sorted(self.flags))


def prefs_of(request: Request) -> Prefs:
    """The account's preferences when this browser's player has saved some (read with its
    session, so no extra query), else the cookie's."""
    stored = getattr(request.state, "account_prefs", None)
    if stored is not None:
        return Prefs.parse(stored)
    return Prefs.parse(request.cookies.get(PREFS_COOKIE))


def csrf_token(request: Request) -> str:
    """This browser session's CSRF token (made on first use); none under /api."""
    if "session" not in request.scope:
        return ""
    return session_token(request.session)


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    context = {
        "csrf": csrf_token(request),
        "prefs": prefs_of(request),
        "themes": THEMES,
        "card_backs": CARD_BACKS,
        # Asked only by a full page (base.html), not by the fragments rendered here too.
        "newcomer": lambda: challenge_for(request),
        **context,
    }
    response = templates.TemplateResponse(request, template, context, status_code=status)
    # The account's preferences, changed on another device, reach this browser's cookie too
    # (pages that do not ask who is viewing paint from the cookie).
    stored = getattr(request.state, "account_prefs", None)
    if stored is not None and stored != request.cookies.get(PREFS_COOKIE):
        response.set_cookie(
            PREFS_COOKIE,
            stored,
            max_age=PREFS_MAX_AGE,
            samesite="lax",
            httponly=False,
            secure=settings_of(request).secure_cookies,
        )
    return response
