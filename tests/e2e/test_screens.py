"""Every board at desktop and phone size: screenshots to look at, and the checks a player's eye
makes — nothing wider than the screen, no pile on top of another, no card index cut off."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from app.engine import Move
from tests.e2e.conftest import Server
from tests.e2e.helpers import click_move, open_deal, version, wait_version
from tests.e2e.test_play import PLANS

pytestmark = pytest.mark.e2e

VIEWPORTS = [(1280, 800), (360, 740)]

LAYOUT_PROBLEMS = """() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth) problems.push(`page is ${doc.scrollWidth}px wide`);
  const table = document.getElementById('table').getBoundingClientRect();
  const piles = [...document.querySelectorAll('#table .pile')];
  const boxes = piles.map(el => [el.id, el.getBoundingClientRect()]);
  for (const [id, r] of boxes) {
    if (r.left < table.left - 0.5 || r.right > table.right + 0.5) problems.push(`${id} sticks out`);
  }
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, r] = boxes[i], [b, s] = boxes[j];
    const w = Math.min(r.right, s.right) - Math.max(r.left, s.left);
    const h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
    if (w > 0.5 && h > 0.5) problems.push(`${a} overlaps ${b}`);
  }
  for (const li of document.querySelectorAll('#table .pile > li:not(.b)')) {
    const name = li.getAttribute('aria-label');
    if (li.scrollWidth > li.clientWidth + 1) problems.push(`index cut off: ${name}`);
    const size = parseFloat(getComputedStyle(li).fontSize);
    if (size < 10) problems.push(`index too small (${size}px): ${name}`);
  }
  const hud = document.querySelector('.hud').getBoundingClientRect();
  if (hud.right > window.innerWidth + 0.5) problems.push('status bar cut off');
  return problems;
}"""


def _play_some(page: Page, slug: str) -> None:
    """Make the first planned moves by click, so the board is not just the deal."""
    for _, text in PLANS[slug][1][:2]:
        v = version(page)
        click_move(page, Move.parse(text))
        wait_version(page, v + 1)


@pytest.mark.parametrize("size", VIEWPORTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_screenshots_of_every_board(
    browser: Browser, server: Server, screenshots: Path, size: tuple[int, int]
) -> None:
    width, height = size
    context = browser.new_context(base_url=server.url, viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        for slug, (deal, _) in PLANS.items():
            open_deal(page, slug, deal)
            assert page.evaluate(LAYOUT_PROBLEMS) == [], f"{slug} at {width}x{height}"
            _play_some(page, slug)
            assert page.evaluate(LAYOUT_PROBLEMS) == [], f"{slug} at {width}x{height}"
            page.evaluate("() => window.scrollTo(0, 0)")
            name = f"{slug}-{width}x{height}"
            page.screenshot(path=screenshots / f"{name}.png", animations="disabled")
            page.screenshot(
                path=screenshots / f"{name}-full.png", full_page=True, animations="disabled"
            )
    finally:
        context.close()


def test_screenshots_of_preferences_and_picking(
    browser: Browser, server: Server, screenshots: Path
) -> None:
    """The four-colour deck with large cards on a phone, and a picked card's destinations."""
    context = browser.new_context(base_url=server.url, viewport={"width": 360, "height": 740})
    context.add_cookies([{"name": "ph_prefs", "value": "four.large", "url": server.url}])
    page = context.new_page()
    try:
        for slug in ("quadrangle", "castles-end"):
            deal, plan = PLANS[slug]
            open_deal(page, slug, deal)
            assert "pref-four" in (page.get_attribute("body", "class") or "")
            assert page.evaluate(LAYOUT_PROBLEMS) == [], slug
            move = Move.parse(plan[0][1])
            page.locator(f"#pile-{move.source} > li").last.click()
            assert page.locator(f"#pile-{move.target}.target").count() == 1
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(
                path=screenshots / f"{slug}-360x740-large-four.png",
                full_page=True,
                animations="disabled",
            )
    finally:
        context.close()
