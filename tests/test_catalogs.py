"""The gettext catalogs as a CI check (docs/languages.md): every message of the sources is in
messages.pot, and every language translates every message, with nothing fuzzy, its
placeholders intact and its plural forms right."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from jinja2 import Environment

from app.config import PROJECT_DIR
from app.engine import GAMES
from app.web.i18n import LANGS, LOCALE_DIR
from tests.visible import visible_parts

TRANSLATED = [lang for lang in LANGS if lang != "en"]


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def _ids(catalog: Catalog) -> set[tuple[object, str | None]]:
    return {(m.id, m.context) for m in catalog if m.id}


@pytest.mark.slow
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


def test_updating_the_catalogs_changes_nothing_when_they_are_current(tmp_path: Path) -> None:
    """scripts/catalogs.sh update, run on a copy of the current catalogs, gives them back
    byte for byte: each language keeps its header (Language, Plural-Forms, the translators'
    comment) and its POT-Creation-Date, so an update shows only the messages that changed."""
    copy = tmp_path / "locale"
    shutil.copytree(LOCALE_DIR, copy, ignore=shutil.ignore_patterns("*.mo"))
    subprocess.run(
        [str(PROJECT_DIR / "scripts" / "catalogs.sh"), "update"],
        env={**os.environ, "CATALOGS_DIR": str(copy)},
        check=True,
        capture_output=True,
    )
    for lang in TRANSLATED:
        po = Path(lang) / "LC_MESSAGES" / "messages.po"
        updated = (copy / po).read_text()
        assert updated.startswith("# "), f"{lang}: the header comment is gone"
        assert f'"Language: {lang}\\n"' in updated, f"{lang}: the header is gone"
        assert updated == (LOCALE_DIR / po).read_text(), f"{lang}: update changed the catalog"
    assert (copy / "messages.pot").read_text() == (LOCALE_DIR / "messages.pot").read_text()


def test_nothing_compiled_is_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.mo"], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
    )
    assert tracked.stdout.strip() == ""


# -- no player-facing words outside the catalogs, in any template ----------------------------

# Words a template may show as they are in every language: the brand, the games' names (proper
# names) and the time zone's abbreviation. Numbers and symbols are not words.
_SAME_IN_EVERY_LANGUAGE = ["Patience Hall", *(rules.name for rules in GAMES.values()), "UTC"]
# What a player sees or hears of a tag besides its text (the languages test reads the same).
_GETTEXT = {"_", "gettext", "ngettext", "pgettext"}
_HOLE = "\ue000%d\ue001"  # where a Jinja expression or tag was: private-use characters


def _template_text(source: str) -> tuple[str, list[list[tuple[str, str]]]]:
    """The template's own text with each ``{{ … }}`` and ``{% … %}`` replaced by a hole, the
    text of ``{% trans %}`` blocks left out (it is a catalog message), and each hole's tokens."""
    env = Environment(extensions=["jinja2.ext.i18n"])
    out: list[str] = []
    holes: list[list[tuple[str, str]]] = []
    in_trans = after_begin = in_expression = False
    for _, kind, value in env.lex(source):
        if kind == "whitespace":
            continue
        if after_begin and kind == "name":
            in_trans = value == "trans" or (in_trans and value != "endtrans")
        after_begin = kind == "block_begin"
        if kind == "data":
            if not in_trans:
                out.append(value)
        elif kind in ("variable_begin", "block_begin"):
            # Only an expression prints; a tag's strings are names of templates, tests, …
            in_expression = kind == "variable_begin"
            out.append(" " + _HOLE % len(holes) + " ")
            holes.append([])
        elif in_expression and kind != "variable_end":
            holes[-1].append((kind, value))
    return "".join(out), holes


def _shown_literals(tokens: list[tuple[str, str]]) -> list[str]:
    """The string literals of an expression that could be shown as they are: not a gettext
    argument, not a method's argument (``.endswith("/replay")``), not compared, not a key,
    not a ``|safe`` piece of markup."""
    shown: list[str] = []
    calls: list[str] = []
    for i, (kind, value) in enumerate(tokens):
        before = tokens[i - 1] if i else ("", "")
        after = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        then = tokens[i + 2] if i + 2 < len(tokens) else ("", "")
        if (kind, value) == ("operator", "("):
            method = i > 1 and tokens[i - 2][1] == "."
            calls.append("gettext" if before[1] in _GETTEXT else "method" if method else "call")
        elif (kind, value) == ("operator", ")") and calls:
            calls.pop()
        elif kind == "string" and "gettext" not in calls and calls[-1:] != ["method"]:
            if before[1] in ("==", "!=", "[") or after[1] in (":", "in"):
                continue
            if after[1] == "|" and then[1] in ("safe", "trans"):
                continue
            shown.append(value)
    return shown


def _words_left(text: str) -> list[str]:
    text = re.sub(r"%(\(\w+\))?[-#0 +.\d]*[a-zA-Z]", " ", text)  # %(name)s, %.1f, %Y
    for kept in _SAME_IN_EVERY_LANGUAGE:
        text = text.replace(kept, " ")
    return re.findall(r"[^\W\d_]{2,}", text)


def _english_in_template(path: Path) -> list[str]:
    text, holes = _template_text(path.read_text())
    found: list[str] = []
    for part in visible_parts(text):
        for hole in re.findall("\ue000(\\d+)\ue001", part):
            found += [s for s in _shown_literals(holes[int(hole)]) if _words_left(s)]
        plain = re.sub("\ue000\\d+\ue001", " ", part)
        if _words_left(plain):
            found.append(" ".join(plain.split()))
    return found


def test_templates_show_no_words_outside_the_catalogs() -> None:
    """What a template shows a player (text, titles, labels, placeholders, alt texts, and the
    string literals its expressions print) is a catalog message: ``_()``, ``ngettext``,
    ``{% trans %}``, ``|trans``; only the brand, the games' names, numbers and symbols are
    written as they are."""
    problems = {
        str(path.relative_to(PROJECT_DIR)): found
        for path in sorted((PROJECT_DIR / "templates").rglob("*.html"))
        if (found := _english_in_template(path))
    }
    assert problems == {}


def test_the_template_check_finds_words_outside_the_catalogs(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        '<h1>{{ _("Fine") }} Hello</h1><p title="Hover me">{% trans %}Fine{% endtrans %}</p>'
        '<p class="{{ \'error\' if x }}">{{ "day" if n == 1 else _("days") }}</p>'
        "<script>var never = 'checked';</script>{{ rules.name }} · Patience Hall"
    )
    assert _english_in_template(page) == ["Hello", "Hover me", '"day"']


def _refusals_with_unlisted_messages(root: Path) -> list[str]:
    """Calls of a refusal (a class named in keywords.txt) whose message is not a literal the
    extraction can read: an f-string or a joined string is English in every language."""
    keywords = (LOCALE_DIR / "keywords.txt").read_text().split()
    refusals = {k.split(":")[0] for k in keywords if k[0].isupper()}
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in refusals and isinstance(node.args[0], ast.JoinedStr | ast.BinOp):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {name}")
    return found


def test_no_refusal_builds_its_message_outside_the_catalogs() -> None:
    """A refusal's message is a template with parameters (``Refusal("… %(n)s …", n=n)``), so
    that the catalogs hold it and the player reads it in their language."""
    assert _refusals_with_unlisted_messages(PROJECT_DIR / "app") == []


def test_the_refusal_check_finds_an_f_string(tmp_path: Path) -> None:
    module = tmp_path / "app" / "example.py"
    module.parent.mkdir()
    module.write_text('def f(n):\n    raise GameOver(f"over after {n} moves")\n')
    assert _refusals_with_unlisted_messages(tmp_path / "app") == ["app/example.py:2: GameOver"]
