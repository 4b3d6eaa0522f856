"""The rules pages: docs/rules/ in the page's language, rendered from Markdown."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import Response
from markdown_it import MarkdownIt
from markupsafe import Markup

from app.config import PROJECT_DIR
from app.engine import GAMES
from app.services.errors import NotFound
from app.web import i18n
from app.web.i18n import N_
from app.web.pages.templating import render

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema


def rules_file(slug: str, lang: str) -> Path:
    """A rule page in ``lang`` (docs/rules/{slug}.{lang}.md), or the English one."""
    folder = PROJECT_DIR / "docs" / "rules"
    translated = folder / f"{slug}.{lang}.md"
    return translated if lang != i18n.DEFAULT and translated.is_file() else folder / f"{slug}.md"


def _rules_html(slug: str) -> Markup:
    return _rules_html_in(slug, i18n.current_lang())


@lru_cache(maxsize=32)
def _rules_html_in(slug: str, lang: str) -> Markup:
    text = rules_file(slug, lang).read_text(encoding="utf-8")
    # The rule pages are our own files; html=False still keeps any raw HTML out.
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    # Links between the rule files point at the pages that show them on the site.
    return Markup(_RULE_LINK.sub(_site_link, html))


_RULE_LINK = re.compile(r'href="([A-Za-z-]+)\.md(#[a-z0-9-]*)?"')


def _site_link(found: re.Match[str]) -> str:
    name, anchor = found[1], found[2] or ""
    return f'href="/rules{"" if name == "README" else "/" + name}{anchor}"'


@router.get("/rules")
def rules_index(request: Request) -> Response:
    """The conventions the five games share (card codes, pile ids, wrap-around)."""
    return render(request, "pages/rules.html", {"rules": None, "body": _rules_html("README")})


@router.get("/rules/{game}")
def rules_page(request: Request, game: str) -> Response:
    rules = GAMES.get(game)
    if rules is None:
        raise NotFound(N_("There is no such game."))
    return render(request, "pages/rules.html", {"rules": rules, "body": _rules_html(game)})
