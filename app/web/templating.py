"""Jinja2 set-up, the player's display preferences, and the one way pages are rendered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from app.config import PROJECT_DIR
from app.engine import GAMES
from app.web.board import layout_css
from app.web.csrf import session_token

templates = Jinja2Templates(directory=PROJECT_DIR / "templates")
# layout_css(rules): the table grid of a game, for every page that draws a board.
templates.env.globals.update(games=GAMES, layout_css=layout_css)

PREFS_COOKIE = "ph_prefs"
PREFS_MAX_AGE = 400 * 24 * 3600
# Preference flag → the class it puts on <body> (auto-move changes play, not looks).
PREF_FLAGS = {"auto": "", "four": "pref-four", "large": "pref-large", "sound": "pref-sound"}


@dataclass(frozen=True, slots=True)
class Prefs:
    """Display and play preferences, kept in a plain cookie (nothing secret in it).

    ``auto``: send cards to the foundations automatically (off by default); ``four``: the
    four-colour deck; ``large``: large cards; ``sound``: sounds (off by default).
    """

    flags: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, raw: str | None) -> Prefs:
        return cls(frozenset(f for f in (raw or "").split(".") if f in PREF_FLAGS))

    @property
    def auto(self) -> bool:
        return "auto" in self.flags

    @property
    def classes(self) -> str:
        return " ".join(sorted(PREF_FLAGS[f] for f in self.flags if PREF_FLAGS[f]))

    def cookie(self) -> str:
        return ".".join(sorted(self.flags))


def prefs_of(request: Request) -> Prefs:
    return Prefs.parse(request.cookies.get(PREFS_COOKIE))


def csrf_token(request: Request) -> str:
    """This browser session's CSRF token (made on first use); none under /api."""
    if "session" not in request.scope:
        return ""
    return session_token(request.session)


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    context = {"csrf": csrf_token(request), "prefs": prefs_of(request), **context}
    return templates.TemplateResponse(request, template, context, status_code=status)
