"""The rules pages (app/web/pages/rules.py): the file in the page's language or English, the
Markdown rendered without raw HTML, and links between rule files pointed at the site's pages."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.engine import GAMES
from app.services.errors import NotFound
from app.web.pages.rules import _rules_html_in, rules_file, rules_page


def test_each_game_has_rules_in_each_language_or_english() -> None:
    for slug in [*GAMES, "README"]:
        assert rules_file(slug, "en").name == f"{slug}.md"
        assert rules_file(slug, "de").name == f"{slug}.de.md"
        assert rules_file(slug, "xx").name == f"{slug}.md"  # no such translation: English


def test_links_between_rule_files_point_at_the_site() -> None:
    html = str(_rules_html_in("README", "en"))
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert "/rules/corners" in hrefs
    assert not [href for href in hrefs if ".md" in href]


def test_a_games_page_is_its_markdown_rendered() -> None:
    html = str(_rules_html_in("corners", "fr"))
    assert html.startswith("<h1>") and "<script" not in html


def test_an_unknown_game_is_not_found() -> None:
    request: Any = None  # refused before anything reads the request
    with pytest.raises(NotFound):
        rules_page(request, "klondike")
