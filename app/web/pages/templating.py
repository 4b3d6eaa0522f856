"""Jinja2 set-up, the player's display preferences, and the one way pages are rendered."""

from __future__ import annotations

import functools
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import jinja2
from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from app.config import PROJECT_DIR
from app.engine import GAMES
from app.web import i18n
from app.web.http.csrf import session_token
from app.web.http.newcomers import challenge_for
from app.web.pages.board import layout_css
from app.web.pages.jswords import js_words
from app.web.state import settings_of
from app.web.words import code_label


class FlatGlobals(jinja2.Environment):
    """Jinja2's environment, each template's globals one plain dict.

    Jinja2 gives every template a ``ChainMap`` of its own globals over the environment's, and
    copies it into a new dict at every render, include and ``{% import %}`` (with a set
    difference of its keys for each import): ~7 and ~10 µs a time through ``ChainMap``'s
    Python-level iteration, some 4% of a board move's CPU (bench/RESULTS.md). A plain dict
    copies in C. The price is the one Jinja2's documentation already asks for: globals are set
    here, before any template is loaded, and not changed afterwards.
    """

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``obj.attribute`` in a template, as Jinja2 reads it (the attribute, else the item),
        with a plain dict's key looked up first when no attribute of that name exists. Most
        contexts here are dicts (a board's status: some twenty reads a move), and Jinja2 comes
        to their keys only after ``getattr`` has raised, ~2 µs each. A plain dict's attributes
        are its class's, so a key named as one of them (``items``) still gives the method."""
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


_DICT_ATTRIBUTES = frozenset(dir(dict))


# As Starlette's Jinja2Templates(directory=…) makes its environment, with the class above.
# The templates are part of the release: a process never reloads them, so Jinja2 need not look
# at their files' times on every render, include and import (four a board move), and keeps
# them in a plain dict rather than a locked LRU (the set of templates is fixed and small).
templates = Jinja2Templates(
    env=FlatGlobals(
        loader=jinja2.FileSystemLoader(PROJECT_DIR / "templates"),
        autoescape=jinja2.select_autoescape(),
        auto_reload=False,
        cache_size=-1,
    )
)
# layout_css(rules): the table grid of a game, for every page that draws a board.
templates.env.globals.update(games=GAMES, layout_css=layout_css)
# Every page speaks the request's language (app/web/i18n.py): gettext through Jinja2's i18n
# extension, new-style (``_("Hello %(name)s", name=…)``, escaped), and Babel's formats.
templates.env.add_extension("jinja2.ext.i18n")
templates.env.policies["ext.i18n.trimmed"] = True
templates.env.install_gettext_callables(  # type: ignore[attr-defined]
    i18n.gettext, i18n.ngettext, newstyle=True, pgettext=i18n.pgettext
)
templates.env.globals.update(
    current_lang=i18n.current_lang,
    languages=i18n.LANG_NAMES,
    card_label=code_label,
    js_words=js_words,
)
templates.env.filters.update(
    num=i18n.number,
    dec=i18n.decimal,
    pct=i18n.percent,
    secs=i18n.seconds,
    hours=i18n.hours,
    day=i18n.day,
    day_time=i18n.day_time,
    trans=i18n.gettext,
)

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
# Labels are catalog message ids: templates say them with ``|trans``.
THEMES = {
    "light": i18n.N_("Light: a green table in a light room"),
    "dark": i18n.N_("Dark: a dark table, a dark room"),
}
CARD_BACKS = {"blue": i18n.N_("Blue"), "red": i18n.N_("Red"), "gold": i18n.N_("Gold")}
# A game's first-visit guide, once dismissed, is remembered as "guide-<slug>".
GUIDE_FLAGS = {f"guide-{slug}" for slug in GAMES}
# The language chosen on the account is kept with the preferences as "lang-<code>".
LANG_FLAGS = {f"{i18n.LANG_PREF}{lang}" for lang in i18n.LANGS}


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
        return _parsed_prefs(raw or "")

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

    @property
    def lang(self) -> str | None:
        """The language chosen on the account, if one was."""
        return i18n.pref_lang(self.cookie())

    def cookie(self) -> str:
        return ".".join(sorted(self.flags))


_KNOWN_FLAGS = PREF_FLAGS.keys() | GUIDE_FLAGS | LANG_FLAGS


@functools.lru_cache(maxsize=1024)
def _parsed_prefs(raw: str) -> Prefs:
    """A cookie's preferences, parsed once per distinct value: a board move reads them twice,
    and a browser sends the same value with every request. Bounded, since the value is the
    client's to choose."""
    return Prefs(frozenset(f for f in raw.split(".") if f in _KNOWN_FLAGS))


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
