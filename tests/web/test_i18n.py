"""The player's language (app/web/i18n.py): how it is chosen, the catalogs, the middleware that
says it, and numbers and times as the locale writes them."""

from __future__ import annotations

from collections.abc import MutableMapping
from datetime import date
from typing import Any

import pytest

from app.web.i18n import (
    DEFAULT,
    LANGS,
    LanguageMiddleware,
    _negotiated,
    accept_language,
    current_lang,
    day,
    decimal,
    duration,
    gettext,
    lang_of_scope,
    number,
    percent,
    pref_lang,
    say_n,
    seconds,
    speaking,
    translations,
)
from tests.web.http.asgi import call, http_scope


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("de-DE,de;q=0.9,en;q=0.8", "de"),
        ("it, fr;q=0.5", "fr"),
        ("en;q=0.2, es;q=0.9", "es"),
        ("fr;q=0, de;q=0.1", "de"),
        ("fr;q=bad, de;q=0.1", "de"),
        ("it, pt", None),
        ("", None),
    ],
)
def test_accept_language(header: str, lang: str | None) -> None:
    assert accept_language(header) == lang
    assert accept_language(header) == lang  # remembered, the same


def test_a_long_accept_language_is_negotiated_each_time_not_remembered() -> None:
    header = "it, fr;q=0.5, " + ", ".join(["zz"] * 60)
    assert len(header) > 200
    remembered = _negotiated.cache_info().currsize
    assert accept_language(header) == "fr"
    assert _negotiated.cache_info().currsize == remembered


def test_the_accounts_choice_is_kept_with_its_preferences() -> None:
    assert pref_lang("dark.lang-fr.four") == "fr"
    assert pref_lang("lang-xx.dark") is None
    assert pref_lang(None) is None


def _scope(query: str = "", **headers: str) -> MutableMapping[str, Any]:
    scope = http_scope("GET", "/", list(headers.items()), state={})
    scope["query_string"] = query.encode()
    return scope


def test_the_query_wins_then_the_account_then_the_cookie_then_the_header() -> None:
    header = {"accept-language": "es", "cookie": "lang=fr"}
    assert lang_of_scope(_scope("lang=de", **header)) == "de"
    assert lang_of_scope(_scope("lang=xx", **header)) == "fr"  # an unknown one is ignored
    account = _scope(**header)
    account["state"]["account_prefs"] = "lang-de"
    assert lang_of_scope(account) == "de"
    assert lang_of_scope(_scope(**header)) == "fr"
    assert lang_of_scope(_scope(**{"accept-language": "es"})) == "es"
    assert lang_of_scope(_scope()) == DEFAULT


def test_the_choice_is_remembered_for_the_request_until_the_account_changes() -> None:
    scope = _scope(**{"accept-language": "es"})
    assert lang_of_scope(scope) == "es"
    scope["headers"] = []  # read once: the header is not looked at again
    assert lang_of_scope(scope) == "es"
    scope["state"]["account_prefs"] = "lang-fr"  # signed in with a choice of its own
    assert lang_of_scope(scope) == "fr"


def test_the_middleware_says_the_language_and_sets_it_for_the_request() -> None:
    heard: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        heard.append(current_lang())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    answer = call(LanguageMiddleware(inner), _scope(**{"accept-language": "fr"}))
    assert heard == ["fr"] and answer.header("content-language") == "fr"
    assert current_lang() == DEFAULT  # nothing is left behind


def test_every_language_has_a_catalog_and_english_is_the_messages_themselves() -> None:
    for lang in LANGS:
        assert translations(lang).gettext("Put back.")
    assert translations("en").gettext("Put back.") == "Put back."
    assert translations("xx").gettext("Put back.") == "Put back."
    with speaking("de"):
        assert gettext("Put back.") != "Put back."


def test_numbers_and_times_as_the_locale_writes_them() -> None:
    assert number(12345) == "12,345" and decimal(2.346, 2) == "2.35" and decimal(7.6, 0) == "8"
    assert percent(0.456, 1) == "45.6%" and seconds(12_340) == "12.3\xa0s"
    assert duration(120) == "2 minutes" and duration(90) == "90 seconds"
    with speaking("de"):
        assert number(12345) == "12.345" and seconds(12_340) == "12,3\xa0s"
        assert percent(0.456, 1).startswith("45,6")
        cards = ("%(n)s card, %(first)s to %(last)s,", "%(n)s cards, %(first)s to %(last)s,")
        assert say_n(*cards, 1200, first="A", last="B") == "1.200 Karten, A bis B,"
        assert say_n(*cards, 1, first="A", last="A") == "1 Karte, A bis A,"


def test_speaking_sets_the_language_only_inside_its_block() -> None:
    with speaking("es"):
        assert current_lang() == "es"
        with speaking("fr"):
            assert current_lang() == "fr"
        assert current_lang() == "es"
    assert current_lang() == DEFAULT


def test_days_in_the_locales_words() -> None:
    assert day(date(2026, 3, 5)) == "Mar 5, 2026"
    with speaking("de"):
        assert day(date(2026, 3, 5)) == "05.03.2026"
