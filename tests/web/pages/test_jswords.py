"""The browser scripts' words (app/web/pages/jswords.py): none in English, every one in the
other languages. (That every script's ``w("…")`` is listed: tests/web/test_languages.py.)"""

from __future__ import annotations

import pytest

from app.web.i18n import LANGS, speaking
from app.web.pages.jswords import JS_MESSAGES, js_words


def test_english_pages_carry_no_words() -> None:
    assert js_words() == {}


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != "en"])
def test_other_languages_carry_every_message_translated(lang: str) -> None:
    with speaking(lang):
        words = js_words()
    assert set(words) == set(JS_MESSAGES)
    assert words["Put back."] != "Put back."
    # Placeholders survive translation, so the script can fill them in.
    for message, said in words.items():
        for name in ("%(card)s", "%(pile)s", "%(url)s", "%(n)s"):
            assert (name in message) == (name in said), (lang, message)
