"""Languages in the browser (issue 25): a whole game of Castle's End won through the page in
German, and the board and the room page in each language on a 390 px phone, looked at as
screenshots (docs/screenshots/lang-*.png): long German words must not break the layout."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from app.config import PROJECT_DIR
from app.engine import get_ruleset
from app.solver import Budget, Outcome, solve
from tests.e2e.conftest import REPORT_CSP, Server
from tests.e2e.helpers import click_move, version, wait_version
from tests.web.test_languages import english_left

pytestmark = pytest.mark.e2e
DOCS_SHOTS = PROJECT_DIR / "docs" / "screenshots"
LOCALES = {"de": "de-DE", "fr": "fr-FR", "es": "es-ES", "en": "en-GB"}


def _page(browser: Browser, server: Server, lang: str, width: int, height: int) -> Iterator[Page]:
    ctx = browser.new_context(
        base_url=server.url,
        viewport={"width": width, "height": height},
        locale=LOCALES[lang],  # the browser's Accept-Language chooses the language
        has_touch=width < 600,
    )
    ctx.set_default_timeout(10_000)
    ctx.add_init_script(REPORT_CSP)
    errors: list[str] = []
    page = ctx.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    ctx.close()
    assert not errors, errors


@pytest.fixture()
def german(browser: Browser, server: Server) -> Iterator[Page]:
    yield from _page(browser, server, "de", 1280, 800)


def test_a_whole_game_won_in_german(german: Page) -> None:
    """Deal 2 of Castle's End, every move of the solver's winning line clicked on the board."""
    rules = get_ruleset("castles-end")
    found = solve(rules.deal(2), Budget(nodes=200_000))
    assert found.outcome is Outcome.WINNABLE and found.moves
    page = german
    page.goto("/deal/castles-end/2")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    page.get_by_role("button", name="Dieses Spiel spielen").click()
    page.wait_for_url("**/games/*")
    expect(page.get_by_role("button", name="Rückgängig")).to_be_visible()
    # First a refusal (nothing but a base choice may move yet), said in German.
    page.locator("#pile-t3 > li").last.click(position={"x": 10, "y": 6})
    page.locator("#pile-t4 > li").last.click()
    expect(page.locator("#announce .error")).to_contain_text("Wähle zuerst die Basis")
    for move in found.moves:
        v = version(page)
        click_move(page, move)
        wait_version(page, v + 1)
    summary = page.locator(".summary")
    expect(summary.locator("#summary-title")).to_have_text("Gewonnen!")
    expect(page.locator("#announce")).to_contain_text("Gewonnen!")
    expect(summary).to_contain_text(f"{len(found.moves)} Züge in")
    expect(summary.locator(".compare")).to_contain_text("Dein erster Sieg in Castle's End")
    assert page.locator("#pile-f1").get_attribute("data-count") == "13"
    left = english_left(page.content(), "de")
    assert left == set(), f"English left on the won board: {sorted(left)}"
    page.screenshot(path=DOCS_SHOTS / "lang-de-castles-end-won-1280.png", animations="disabled")


@pytest.mark.parametrize("lang", ["de", "fr", "es", "en"])
def test_board_and_room_on_a_phone_in_each_language(
    browser: Browser, server: Server, lang: str
) -> None:
    for page in _page(browser, server, lang, 390, 844):
        page.goto("/deal/quadrangle/5")
        page.locator("form[action='/games'] button.primary").first.click()
        page.wait_for_url("**/games/*")
        expect(page.locator("html")).to_have_attribute("lang", lang)
        _no_sideways_scroll(page)
        page.screenshot(path=DOCS_SHOTS / f"lang-{lang}-board-390.png", animations="disabled")
        page.goto("/")
        page.locator("form[action='/rooms'] button").first.click()
        page.wait_for_url("**/rooms/*")
        expect(page.locator("html")).to_have_attribute("lang", lang)
        page.locator("#start-race").wait_for()
        _no_sideways_scroll(page)
        page.screenshot(path=DOCS_SHOTS / f"lang-{lang}-room-390.png", full_page=True)
        if lang != "en":
            left = english_left(page.content(), lang)
            assert left == set(), f"{lang}: English left on the room page: {sorted(left)}"


def _no_sideways_scroll(page: Page) -> None:
    """Nothing, however long its words, makes the page wider than the phone."""
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"the page is {wide}px wider than the screen"
