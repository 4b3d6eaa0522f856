"""Languages in the browser (issue 25): a whole game of Castle's End won through the page in
German, and the board, the room page and the competition pages (daily challenge, event, race
queue, race leaderboard) in each language on a 390 px phone, looked at as screenshots
(test-artifacts/screenshots/lang-*.png; with UPDATE_SCREENSHOTS=1 the copies in
docs/screenshots/ are rewritten): long German words must not break the layout."""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Browser, Page, expect

from app.cli import main
from app.config import PROJECT_DIR, Settings
from app.engine import DEVELOPMENT_KEY, get_ruleset
from app.solver import Budget, Outcome, solve
from tests.e2e.conftest import REPORT_CSP, SCREENSHOTS, Server
from tests.e2e.helpers import click_move, people, version, wait_version
from tests.web.test_languages import english_left

pytestmark = pytest.mark.e2e
# A plain run leaves the checkout as it was: the tracked copies are rewritten only when asked,
# as test_looks.py does for docs/playing.md's.
DOCS_SHOTS = (
    PROJECT_DIR / "docs" / "screenshots" if os.environ.get("UPDATE_SCREENSHOTS") else SCREENSHOTS
)
LOCALES = {"de": "de-DE", "fr": "fr-FR", "es": "es-ES", "en": "en-GB"}


def _page(
    browser: Browser, server: Server, lang: str, width: int, height: int, still: bool = False
) -> Iterator[Page]:
    """``still``: the browser asks for reduced motion, so no card slides between two clicks."""
    ctx = browser.new_context(
        base_url=server.url,
        viewport={"width": width, "height": height},
        locale=LOCALES[lang],  # the browser's Accept-Language chooses the language
        has_touch=width < 600,
        reduced_motion="reduce" if still else "no-preference",
    )
    ctx.set_default_timeout(30_000)
    ctx.add_init_script(REPORT_CSP)
    errors: list[str] = []
    page = ctx.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    ctx.close()
    assert not errors, errors


@pytest.fixture()
def german(browser: Browser, server: Server) -> Iterator[Page]:
    # A whole game is 108 moves, and each waited for its card's slide: 34 s of the walk, 14 s
    # without. The slides are tested on their own (tests/e2e/test_feel.py).
    yield from _page(browser, server, "de", 1280, 800, still=True)


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


GAME = "castles-end"  # a pool of its own: tests/e2e/test_compete.py draws Corners deals


@pytest.fixture(scope="module")
def competition(browser: Browser, arena: Server) -> int:
    """What the competition pages show: certified deals (each challenge and event game is a
    deal of the pool of its player's own: 7 drawn here), an event running now, and a rated race
    two strangers left at once (forfeits), so the race leaderboard has rows. Returns the
    event's number."""
    settings = Settings(database_url=arena.database_url, deal_key=DEVELOPMENT_KEY.decode())
    certify = ["certify", "--game", GAME, "--count", "8", "--nodes", "50000"]
    assert main(certify, settings) == 0
    starts = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        create = ["event", "create", "--game", GAME, "--starts", starts, "--minutes", "60"]
        assert main(create, settings) == 0
    event = int(re.search(r"event (\d+):", out.getvalue())[1])  # type: ignore[index]
    errors: list[str] = []
    contexts, pages = people(browser, arena.url, 2, errors)
    try:
        # Two addresses: the queue never pairs two players of one address.
        for context, address in zip(contexts, ("198.51.100.71", "203.0.113.72"), strict=True):
            context.set_extra_http_headers({"X-Forwarded-For": address})
        for page in pages:
            page.goto("/")
            page.locator(f'form[action="/races/queue"]:has(input[value="{GAME}"]) button').click()
        for page in pages:
            page.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$"))
        for page in pages:
            page.get_by_role("button", name=re.compile("Leave", re.I)).first.click()
            page.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$|/$"))
        assert not errors, errors
    finally:
        for context in contexts:
            context.close()
    return event


@pytest.mark.parametrize("lang", ["de", "fr", "es"])
def test_competition_pages_on_a_phone_in_each_language(
    browser: Browser, arena: Server, competition: int, lang: str
) -> None:
    """The daily challenge (before and after a game of it, with its standings), an event with
    its standings, the race queue while waiting, and the race leaderboard with its table."""
    for page in _page(browser, arena, lang, 390, 844):
        page.goto(f"/daily/{GAME}/challenge")
        _look(page, lang, f"lang-{lang}-challenge-390.png")
        page.locator(f'form[action="/daily/{GAME}/challenge"] button').click()
        page.wait_for_url("**/games/*")
        page.goto(f"/daily/{GAME}/challenge")
        page.locator("#standings").wait_for()
        _look(page, lang, f"lang-{lang}-challenge-played-390.png", fits=("standings",))
        page.goto(f"/events/{competition}")
        page.locator(f'form[action="/events/{competition}/join"] button').click()
        page.wait_for_url(f"**/events/{competition}")
        page.locator(f'form[action="/events/{competition}/next"] button').click()
        page.wait_for_url("**/games/*")
        page.goto(f"/events/{competition}")
        page.locator("#event-standings tbody tr").first.wait_for()
        # Seven columns: in Spanish ("Victorias", "Tiempo", "Racha") the last one is a swipe
        # away within the table; German and French fit.
        event_fits = ("event-standings",) if lang != "es" else ()
        _look(page, lang, f"lang-{lang}-event-390.png", fits=event_fits)
        page.goto("/")
        page.locator(f'form[action="/races/queue"]:has(input[value="{GAME}"]) button').click()
        page.wait_for_url("**/races/queue")
        page.locator(".queue-waiting").wait_for()
        _look(page, lang, f"lang-{lang}-race-queue-390.png")
        page.locator('form[action="/races/queue/leave"] button').click()  # the next language's
        page.goto(f"/leaderboard/races/{GAME}")  # player must not race this one
        expect(page.locator("#race-board tbody tr")).to_have_count(2)
        _look(page, lang, f"lang-{lang}-race-board-390.png", fits=("race-board",))


def _look(page: Page, lang: str, name: str, fits: tuple[str, ...] = ()) -> None:
    """The page as the phone shows it: in ``lang``, no English left, nothing wider than the
    screen, the tables ``fits`` names not even scrolled within themselves; saved (whole) for a
    person to look at."""
    expect(page.locator("html")).to_have_attribute("lang", lang)
    _no_sideways_scroll(page)
    for table in fits:  # the whole table in sight, no sideways swipe within it
        box = page.locator(f"table#{table}")
        wide = box.evaluate("(t) => t.scrollWidth - t.clientWidth")
        assert wide <= 0, f"{lang}: #{table} is {wide}px wider than its box on {page.url}"
    page.screenshot(path=DOCS_SHOTS / name, full_page=True, animations="disabled")
    left = english_left(page.content(), lang)
    assert left == set(), f"{lang}: English left on {page.url}: {sorted(left)}"


# Each element wider than the screen or reaching past its right edge (a skip link parked off
# to the left scrolls nothing), unless a scrolling (or clipping) ancestor inside the screen
# holds it: that is a table scrolled within its own box, not a page pushed sideways. Visually
# hidden text (clipped to 1 px for screen readers) is not drawn.
_TOO_WIDE = """() => {
  const width = window.innerWidth, out = [];
  const held = (el) => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow !== "visible") {
        const box = up.getBoundingClientRect();
        return box.left >= -1 && box.right <= width + 1;
      }
    }
    return false;
  };
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.width <= 1 && box.height <= 1) continue;
    if ((box.right > width + 1 || box.width > width) && !held(el)) {
      const id = el.id ? "#" + el.id : "";
      const cls = el.classList.length ? "." + [...el.classList].join(".") : "";
      const where = `${Math.round(box.left)}..${Math.round(box.right)}`;
      const text = (el.textContent || "").trim().slice(0, 60);
      out.push(`${el.tagName.toLowerCase()}${id}${cls} ${where}: ${text}`);
    }
  }
  return out;
}"""


def _no_sideways_scroll(page: Page) -> None:
    """Nothing, however long its words, makes the page wider than the phone: the document does
    not scroll sideways and no element reaches past the screen's edges."""
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"the page is {wide}px wider than the screen"
    too_wide = page.evaluate(_TOO_WIDE)
    assert too_wide == [], f"wider than the screen ({page.url}): {too_wide}"
