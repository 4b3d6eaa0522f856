"""axe-core in the page: every accessibility rule of WCAG 2.x A and AA (and best practice),
run on what the page shows, in the theme it shows."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).parent / "vendor" / "axe-4.11.0.min.js"


@cache
def _source() -> str:
    return AXE.read_text(encoding="utf-8")


def violations(page: Page) -> list[str]:
    """axe's violations on the page as it is, one line each (rule, impact, where)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_source())  # through the devtools protocol: the page's CSP does not apply
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .map(v => ({id: v.id, impact: v.impact,
                        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    return [f"{v['id']} ({v['impact']}): {', '.join(v['nodes'])}" for v in found]


def set_theme(page: Page, dark: bool) -> None:
    """Switch the page's theme as the preferences form does (the class the server renders)."""
    page.evaluate("d => document.body.classList.toggle('theme-dark', d)", dark)


def assert_clean_in_both_themes(page: Page, what: str) -> None:
    problems = {}
    for dark in (False, True):
        set_theme(page, dark)
        found = violations(page)
        if found:
            problems["dark" if dark else "light"] = found
    set_theme(page, False)
    assert not problems, f"{what}: {problems}"
