"""The board's preferences and the page language: cookies, and the account when signed in."""

from __future__ import annotations

import json
import re
from typing import Annotated
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from app.engine import GAMES
from app.services.errors import InvalidRequest
from app.web import i18n
from app.web.deps import PlayersDep, ViewerDep
from app.web.i18n import N_
from app.web.pages.htmx import is_htmx, vary_on_htmx
from app.web.pages.templating import (
    PREF_FLAGS,
    PREFS_COOKIE,
    PREFS_MAX_AGE,
    Prefs,
    prefs_of,
)
from app.web.state import settings_of

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema
# Where a form may send the browser back to: a path on this site, never an open redirect.
SAFE_BACK = re.compile(r"/(?![/\\])[A-Za-z0-9/_.~%?=&-]*")


@router.post("/prefs")
def save_prefs(
    request: Request,
    viewer: ViewerDep,
    players: PlayersDep,
    auto: Annotated[str, Form(max_length=8)] = "",
    four: Annotated[str, Form(max_length=8)] = "",
    large: Annotated[str, Form(max_length=8)] = "",
    sound: Annotated[str, Form(max_length=8)] = "",
    theme: Annotated[str, Form(max_length=16)] = "",
    cardback: Annotated[str, Form(max_length=16)] = "",
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    """The preferences form: on the account (when this browser has a player: they follow it to
    every device) and in the cookie. Guides already read stay read. An unknown theme or card
    back is the default one."""
    chosen = {
        name
        for name, value in (("auto", auto), ("four", four), ("large", large), ("sound", sound))
        if value
    }
    if theme == "dark":
        chosen.add("dark")
    if f"back-{cardback}" in PREF_FLAGS:
        chosen.add(f"back-{cardback}")
    kept = {f for f in prefs_of(request).flags if f.startswith(("guide-", i18n.LANG_PREF))}
    return _store_prefs(request, viewer, players, Prefs(frozenset(chosen | kept)), back)


@router.post("/lang")
def choose_language(
    request: Request,
    viewer: ViewerDep,
    players: PlayersDep,
    lang: Annotated[str, Form(max_length=8)],
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    """The language picker of every page's header: on the account (when this browser has a
    player: it follows the player to every device) and in the ``lang`` cookie."""
    if lang not in i18n.LANGS:
        raise InvalidRequest(i18n.say("There is no such language: choose en, de, fr or es."))
    flags = {f for f in prefs_of(request).flags if not f.startswith(i18n.LANG_PREF)}
    prefs = Prefs(frozenset(flags | {i18n.LANG_PREF + lang}))
    if viewer is not None:
        players.save_prefs(viewer, prefs.cookie())
    target = _without_lang(back) if SAFE_BACK.fullmatch(back) else "/"
    response = RedirectResponse(target, status_code=303)
    set_lang_cookie(request, response, lang)
    set_prefs_cookie(request, response, prefs.cookie())
    return response


def _without_lang(back: str) -> str:
    """The page to go back to, less its ``?lang=`` (a page opened by an alternate's link):
    that would outrank the language just chosen, and the page would come back unchanged."""
    page = urlsplit(back)
    if "lang=" not in page.query:
        return back
    rest = [(k, v) for k, v in parse_qsl(page.query, keep_blank_values=True) if k != "lang"]
    return urlunsplit(page._replace(query=urlencode(rest)))


def set_lang_cookie(request: Request, response: Response, lang: str) -> None:
    response.set_cookie(
        i18n.LANG_COOKIE,
        lang,
        max_age=PREFS_MAX_AGE,
        samesite="lax",
        httponly=False,
        secure=settings_of(request).secure_cookies,
    )


@router.post("/prefs/guide")
def guide_read(
    request: Request,
    viewer: ViewerDep,
    players: PlayersDep,
    game: Annotated[str, Form(max_length=64)],
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    """A game's first-visit guide, dismissed: it is not shown again (remembered as the other
    preferences are)."""
    if game not in GAMES:
        raise InvalidRequest(N_("There is no such game."))
    prefs = prefs_of(request)
    return _store_prefs(request, viewer, players, Prefs(prefs.flags | {f"guide-{game}"}), back)


def _store_prefs(
    request: Request, viewer: str | None, players: PlayersDep, prefs: Prefs, back: str
) -> Response:
    if viewer is not None:
        players.save_prefs(viewer, prefs.cookie())
    if is_htmx(request):
        # The page puts on the classes the server paints with (the cookie is set below).
        response: Response = Response(status_code=204)
        response.headers["HX-Trigger"] = json.dumps({"prefs-saved": {"classes": prefs.classes}})
    else:
        # Only a path on this site: never an open redirect.
        target = back if SAFE_BACK.fullmatch(back) else "/"
        response = RedirectResponse(target, status_code=303)
    set_prefs_cookie(request, response, prefs.cookie())
    return vary_on_htmx(response)


def set_prefs_cookie(request: Request, response: Response, value: str) -> None:
    response.set_cookie(
        PREFS_COOKIE,
        value,
        max_age=PREFS_MAX_AGE,
        samesite="lax",
        httponly=False,
        secure=settings_of(request).secure_cookies,
    )
