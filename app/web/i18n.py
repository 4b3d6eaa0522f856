"""The player's language: which one (``lang`` in the query, the account's choice, the ``lang``
cookie, ``Accept-Language``, else English) and the gettext catalogs that speak it.

Catalogs are gettext ``.po`` files under app/locale (Babel extracts them: babel.cfg,
docs/languages.md). They are compiled in memory on first use, so nothing compiled is ever
committed or stale. The language of the request being served is found through a context
variable that :class:`LanguageMiddleware` sets, so that templates, fragments and error answers
all say the same language without passing it around.
"""

from __future__ import annotations

import gettext as _gettext
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import date, datetime
from functools import cache, lru_cache
from io import BytesIO
from typing import Any
from urllib.parse import parse_qs, urlsplit

from babel import Locale, negotiate_locale
from babel.dates import format_date, format_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import Translations
from babel.units import format_unit
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import PROJECT_DIR

LANGS = ("en", "de", "fr", "es")
# Each language by its own name, for the picker.
LANG_NAMES = {"en": "English", "de": "Deutsch", "fr": "Français", "es": "Español"}
DEFAULT = "en"
LANG_COOKIE = "lang"
LANG_PREF = "lang-"  # the account's choice, kept with its other preferences: "lang-de"
LOCALE_DIR = PROJECT_DIR / "app" / "locale"
DOMAIN = "messages"

_scope: ContextVar[Scope | None] = ContextVar("ph_i18n_scope", default=None)
_forced: ContextVar[str | None] = ContextVar("ph_i18n_forced", default=None)


def N_(message: str) -> str:
    """Marks a message for the catalogs where it is defined; ``gettext`` says it when used."""
    return message


@cache
def translations(lang: str) -> _gettext.NullTranslations:
    """The catalog of ``lang``, compiled from its .po file (English: the messages themselves).
    Fuzzy entries are left out: an unchecked translation is not shown."""
    if lang not in LANGS or lang == DEFAULT:
        return _gettext.NullTranslations()
    with (LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as po:
        catalog = read_po(po, locale=lang, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def accept_language(header: str) -> str | None:
    """The best of our languages for an ``Accept-Language`` header (Babel's negotiation).
    Remembered for headers of a usual length: browsers send a handful, and every answer says
    its language (a long one is worked out each time, so the memory stays small)."""
    return _negotiated(header) if len(header) <= 200 else _negotiate(header)


@lru_cache(maxsize=512)
def _negotiated(header: str) -> str | None:
    return _negotiate(header)


def _negotiate(header: str) -> str | None:
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate(header.split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag and q > 0:
            ranked.append((-q, i, tag.strip()))
    preferred = [tag for _, _, tag in sorted(ranked)]
    return negotiate_locale(preferred, LANGS, sep="-")


def pref_lang(prefs: str | None) -> str | None:
    """The language stored with an account's preferences ("…lang-de…"), if any."""
    for flag in (prefs or "").split("."):
        if flag.startswith(LANG_PREF) and flag[len(LANG_PREF) :] in LANGS:
            return flag[len(LANG_PREF) :]
    return None


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers") or ():
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def _asked(query: bytes) -> str | None:
    """The language a query string asks for (``lang=``), if it is one of ours."""
    if b"lang=" not in query:
        return None
    asked = parse_qs(query.decode("latin-1")).get("lang", [""])[0]
    return asked if asked in LANGS else None


def lang_of_scope(scope: Scope) -> str:
    """The request's language: ``?lang=`` (the links of ``hreflang``; for a page's own htmx
    requests, the page's), the account's choice, the ``lang`` cookie, ``Accept-Language``,
    else English."""
    state = scope.get("state")
    account = state.get("account_prefs") if isinstance(state, dict) else None
    cached = state.get("ph_lang") if isinstance(state, dict) else None
    if cached is not None and cached[0] == account:
        return str(cached[1])
    lang = _asked(scope.get("query_string") or b"")
    if lang is None:
        # A page opened by a ``?lang=`` link speaks that language in its own requests too
        # (its moves, hints and parts loaded later): htmx sends the page's address with each.
        page = _header(scope, b"hx-current-url")
        lang = _asked(urlsplit(page).query.encode("latin-1")) if "lang=" in page else None
    lang = lang or pref_lang(account)
    if lang is None:
        cookie = cookie_parser(_header(scope, b"cookie")).get(LANG_COOKIE, "")
        lang = cookie if cookie in LANGS else None
    lang = lang or accept_language(_header(scope, b"accept-language")) or DEFAULT
    if isinstance(state, dict):
        state["ph_lang"] = (account, lang)
    return lang


def current_lang() -> str:
    forced = _forced.get()
    if forced is not None:
        return forced
    scope = _scope.get()
    return DEFAULT if scope is None else lang_of_scope(scope)


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Say everything in ``lang`` inside the block (tests, the CLI, the catalogs check)."""
    token = _forced.set(lang)
    try:
        yield
    finally:
        _forced.reset(token)


def with_content_language(
    headers: list[tuple[bytes, bytes]], scope: Scope
) -> list[tuple[bytes, bytes]]:
    """``headers`` with the request's language as ``Content-Language`` unless the app set one."""
    if not any(k == b"content-language" for k, _ in headers):
        headers.append((b"content-language", lang_of_scope(scope).encode()))
    return headers


class WordsOf:
    """``with WordsOf(scope):`` the request's language for everything said inside, as the
    middleware makes it known (a class, not a generator: the move lane pays for it per move)."""

    __slots__ = ("scope", "token")

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def __enter__(self) -> None:
        self.token = _scope.set(self.scope)

    def __exit__(self, *_: object) -> None:
        _scope.reset(self.token)


class LanguageMiddleware:
    """Makes the request's language known to everything that words its answer (templates,
    refusals, API error messages) and says it in ``Content-Language``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _scope.set(scope)

        async def say_language(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                message["headers"] = with_content_language(headers, scope)
            await send(message)

        try:
            await self.app(scope, receive, say_language)
        finally:
            _scope.reset(token)


# -- saying things ---------------------------------------------------------------------------


def gettext(message: str) -> str:
    return translations(current_lang()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(current_lang()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    return translations(current_lang()).pgettext(context, message)


_ = gettext


def say(message: str, **params: Any) -> str:
    """``gettext`` with ``%(name)s`` parameters filled in."""
    text = gettext(message)
    return text % params if params else text


def say_n(singular: str, plural: str, n: int, **params: Any) -> str:
    """``ngettext`` with ``%(n)s`` (the count, formatted for the locale) and parameters."""
    return ngettext(singular, plural, n) % {"n": number(n), **params}


# -- numbers, dates and durations, formatted for the locale (Babel) ------------------------


def number(n: int | float) -> str:
    return _number(n, current_lang())


# Babel formats a number or a span in tens of microseconds, and a board answer says a dozen of
# them (every pile's count, the clock): the same few values, so each is formatted once.
@lru_cache(maxsize=4096)
def _number(n: int | float, lang: str) -> str:
    return str(format_decimal(n, locale=lang))


def decimal(x: float, digits: int = 1) -> str:
    pattern = "#,##0." + "0" * digits if digits else "#,##0"
    return str(format_decimal(x, format=pattern, locale=current_lang()))


def percent(fraction: float, digits: int = 0) -> str:
    """A share as the locale writes a percentage ("45.6%", "45,6 %"), ``digits`` decimals."""
    lang = current_lang()
    pattern = Locale.parse(lang).percent_formats[None].pattern
    if digits:
        pattern = _with_decimals(pattern, digits)
    return str(format_percent(fraction, format=pattern, locale=lang))


def _with_decimals(pattern: str, digits: int) -> str:
    """A number pattern ("#,##0 %") with ``digits`` decimals after its last digit."""
    last = pattern.rindex("0")
    return pattern[: last + 1] + "." + "0" * digits + pattern[last + 1 :]


def seconds(ms: int | float) -> str:
    """A time in seconds with one decimal, the unit the SI symbol: "12.3 s", "12,3 s"."""
    return f"{decimal(ms / 1000, 1)}\u00a0s"


def duration(total_seconds: int) -> str:
    """A span in words: "2 minutes", "90 Sekunden"."""
    return _duration(total_seconds, current_lang())


@lru_cache(maxsize=4096)
def _duration(total_seconds: int, lang: str) -> str:
    if total_seconds and total_seconds % 60 == 0:
        return str(format_unit(total_seconds // 60, "duration-minute", "long", locale=lang))
    return str(format_unit(total_seconds, "duration-second", "long", locale=lang))


def hours(n: int) -> str:
    """A number of hours in words: "23 hours", "23 Stunden", "1 heure"."""
    return str(format_unit(n, "duration-hour", "long", locale=current_lang()))


def day(d: date | datetime) -> str:
    return str(format_date(d, "medium", locale=current_lang()))


def day_time(d: datetime) -> str:
    """A short date and time: "26 Nov 14:05", "26. Nov. 14:05"."""
    return str(format_datetime(d, "d MMM HH:mm", locale=current_lang()))


def locale_name(lang: str) -> str:
    return str(Locale.parse(lang).get_display_name(lang) or lang)
