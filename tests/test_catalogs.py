"""The gettext catalogs as a CI check (docs/languages.md): every message of the sources is in
messages.pot, and every language translates every message, with nothing fuzzy, its
placeholders intact and its plural forms right."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from app.config import PROJECT_DIR
from app.web.i18n import LANGS, LOCALE_DIR

TRANSLATED = [lang for lang in LANGS if lang != "en"]


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def _ids(catalog: Catalog) -> set[tuple[object, str | None]]:
    return {(m.id, m.context) for m in catalog if m.id}


def test_the_template_is_current_with_the_sources(tmp_path: Path) -> None:
    """scripts/catalogs.sh extract, run now, gives the committed messages.pot: no message of a
    template or module is left out of the catalogs (run the script and commit its output)."""
    keywords = (LOCALE_DIR / "keywords.txt").read_text().split()
    out = tmp_path / "fresh.pot"
    args = [str(Path(sys.executable).parent / "pybabel"), "extract", "-F", "babel.cfg"]
    for keyword in keywords:
        args += ["-k", keyword]
    args += ["--no-location", "--sort-output", "--omit-header", "-o", str(out), "."]
    subprocess.run(args, cwd=PROJECT_DIR, check=True, capture_output=True)
    fresh, committed = _ids(_read(out)), _ids(_read(LOCALE_DIR / "messages.pot"))
    assert fresh - committed == set(), "messages missing from messages.pot: scripts/catalogs.sh"
    assert committed - fresh == set(), "stale messages in messages.pot: scripts/catalogs.sh"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_message_is_translated_and_none_is_fuzzy(lang: str) -> None:
    template = _read(LOCALE_DIR / "messages.pot")
    catalog = _read(LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po", lang)
    assert _ids(catalog) == _ids(template), f"{lang}: run scripts/catalogs.sh update"
    untranslated, fuzzy = [], []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if not all(strings):
            untranslated.append(message.id)
        if message.fuzzy:
            fuzzy.append(message.id)
    assert untranslated == [], f"{lang}: untranslated messages"
    assert fuzzy == [], f"{lang}: fuzzy messages (check and unmark them)"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_translations_keep_their_placeholders_and_plural_forms(lang: str) -> None:
    catalog = _read(LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po", lang)
    # Babel's checks: python-format placeholders match the message id's, plural counts match.
    problems = [(m.id, [str(e) for e in errors]) for m, errors in catalog.check()]
    assert problems == []
    assert catalog.num_plurals == 2
    expected = "(n > 1)" if lang == "fr" else "(n != 1)"
    assert catalog.plural_expr == expected


def test_nothing_compiled_is_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.mo"], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
    )
    assert tracked.stdout.strip() == ""
