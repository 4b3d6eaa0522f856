"""Themes and card backs (issue 23): they switch without a reload, follow a signed-in player to
another browser, and every page is axe-clean in both themes at desktop and phone sizes. The
phone screenshots of every game in both themes are the ones docs/screenshots/ keeps."""

from __future__ import annotations

import os
import re
import secrets

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from app.config import PROJECT_DIR
from app.engine import GAMES, Move
from tests.e2e.axe import assert_clean_in_both_themes
from tests.e2e.conftest import Server
from tests.e2e.helpers import PATIENCE_MS, click_move, game_json, open_deal, version, wait_version
from tests.e2e.test_flows import _castles_end_one_card_from_winning, _set_state
from tests.e2e.test_play import PLANS

pytestmark = pytest.mark.e2e

DOCS = PROJECT_DIR / "docs" / "screenshots"


def _sign_up(page: Page, name: str, password: str) -> None:
    page.goto("/account")
    page.locator('input[name="name"]').first.fill(name)
    page.locator('input[name="name"]').first.press("Enter")
    expect(page.locator("body")).to_contain_text(f"You are now {name}")
    page.locator('input[name="password"][autocomplete="new-password"]').fill(password)
    page.locator('input[name="password"][autocomplete="new-password"]').press("Enter")
    expect(page.locator(".flash")).to_contain_text("Password set")


def test_themes_switch_without_reload_and_follow_the_account(
    browser: Browser, server: Server
) -> None:
    first, second = (browser.new_context(base_url=server.url) for _ in range(2))
    try:
        page = first.new_page()
        name, password = f"Looks{secrets.token_hex(3)}", secrets.token_urlsafe(12)
        _sign_up(page, name, password)
        open_deal(page, "castles-end", 1)
        page.evaluate("() => { window.__same = true; }")
        assert "theme-dark" not in (page.get_attribute("body", "class") or "")
        page.locator("details.prefs summary").click()
        with page.expect_response("**/prefs") as saved:
            page.get_by_label("Dark: a dark table, a dark room").check()
        assert saved.value.status == 204
        with page.expect_response("**/prefs"):
            page.get_by_label("Red").check()
        body = page.locator("body")
        expect(body).to_have_class(re.compile(r"\btheme-dark\b"))
        expect(body).to_have_class(re.compile(r"\bback-red\b"))
        assert page.evaluate("() => window.__same === true")  # no reload
        felt = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert felt == "rgb(19, 23, 25)"
        # Another browser: signing in brings the account's choices, from the first paint.
        other = second.new_page()
        other.goto("/account")
        form = other.locator("#sign-in form").first
        form.locator('input[name="name"]').fill(name)
        form.locator('input[name="password"]').fill(password)
        form.locator('input[name="password"]').press("Enter")
        expect(other.locator(".flash")).to_contain_text("Signed in")
        other.goto("/")
        assert {"theme-dark", "back-red"} <= set(
            (other.get_attribute("body", "class") or "").split()
        )
        # A change made there reaches the first browser on its next page.
        other.goto("/account")
        with other.expect_response("**/prefs"):
            other.get_by_label("Light: a green table in a light room").check()
        page.goto("/")
        classes = set((page.get_attribute("body", "class") or "").split())
        assert "theme-dark" not in classes and "back-red" in classes
    finally:
        first.close()
        second.close()


SIZES: list[ViewportSize] = [{"width": 1280, "height": 800}, {"width": 390, "height": 844}]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_every_page_is_axe_clean_in_both_themes(
    browser: Browser, server: Server, size: ViewportSize
) -> None:
    phone = size["width"] < 600
    ctx = browser.new_context(base_url=server.url, viewport=size, has_touch=phone, is_mobile=phone)
    ctx.set_default_timeout(PATIENCE_MS)  # a long walk: see PATIENCE_MS
    try:
        page = ctx.new_page()
        game_id = open_deal(page, "corners", 3)
        assert_clean_in_both_themes(page, "a board in play, with its first-visit guide")
        page.get_by_role("button", name="Got it").click()
        page.locator("#pile-stock").click()
        wait_version(page, 1)
        page.locator("details.prefs summary").click()
        page.locator("details.help summary").click()
        assert_clean_in_both_themes(page, "a board in play, help and preferences open")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Resign").click()
        expect(page.locator("#game-status")).to_have_class(re.compile("lost"))
        assert_clean_in_both_themes(page, "a finished board with its summary")
        name = page.evaluate("() => document.querySelector('.game-head .by').textContent")
        name = name.split("·")[0].strip()
        # A finished rated game: the player page draws its charts.
        page.goto("/")
        page.locator(".game-card", has_text="Corners").get_by_role(
            "button", name="New rated game"
        ).click()
        page.wait_for_selector("#game-status")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Resign").click()
        expect(page.locator("#game-status")).to_have_class(re.compile("lost"))
        # A rated win (put one card from the end): its summary, then every chart there is.
        page.goto("/")
        page.locator(".game-card", has_text="Castle's End").get_by_role(
            "button", name="New rated game"
        ).click()
        page.wait_for_selector("#game-status")
        won_id = page.url.rsplit("/", 1)[1]
        _set_state(server, won_id, _castles_end_one_card_from_winning())
        page.reload()
        page.locator("#pile-t1 > li").last.click()
        page.locator("#pile-f4").click()
        expect(page.locator("#summary-title")).to_have_text("You won!")
        assert_clean_in_both_themes(page, "a won board with its summary")
        won_deal = game_json(page, won_id)["deal"]
        pages = [
            "/",
            "/my-games",
            "/leaderboard",
            "/leaderboard?game=corners",
            "/account",
            f"/players/{name}",
            "/deal/corners/3",  # finished by this player: its games
            f"/deal/castles-end/{won_deal}",  # and a won one: the chart of moves per win
            f"/games/{game_id}/replay",
            f"/games/{game_id}/analysis",
            "/rules",
            *(f"/rules/{slug}" for slug in GAMES),
            "/deal/corners/0",  # a 404 page
        ]
        for path in pages:
            page.goto(path)
            assert_clean_in_both_themes(page, path)
            if path.startswith("/players/"):
                # Corners, lost: its win rate; Castle's End, won: win rate, runs, moves.
                expect(page.locator("svg.chart")).to_have_count(4)
            if path.startswith("/deal/castles-end/"):
                expect(page.locator("svg.chart")).to_have_count(1)
        # The other tables in play, each with its first-visit guide (wide ones scroll on a
        # phone: the scrolling table must be reachable by keyboard).
        for slug in GAMES:
            if slug != "corners":
                open_deal(page, slug, 2)
                assert_clean_in_both_themes(page, f"a {slug} board in play")
        page.goto("/")
        page.locator(".game-card", has_text="Patriarchs").get_by_role(
            "button", name="Race friends (new room)"
        ).click()
        page.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$"))
        assert_clean_in_both_themes(page, "a room")
    finally:
        ctx.close()


@pytest.mark.skipif(
    not os.environ.get("UPDATE_SCREENSHOTS"),
    reason="makes docs/playing.md's screenshots: UPDATE_SCREENSHOTS=1 to write docs/screenshots/",
)
@pytest.mark.parametrize("slug", list(PLANS))
def test_phone_screenshots_of_every_game_in_both_themes(
    browser: Browser, server: Server, slug: str
) -> None:
    """Small PNGs for docs/playing.md (docs/screenshots/), after the first move of the plan."""
    for theme, cookie in (("light", "guide-" + slug), ("dark", f"dark.guide-{slug}")):
        ctx = browser.new_context(
            base_url=server.url,
            viewport={"width": 390, "height": 844},
            has_touch=True,
            is_mobile=True,
            device_scale_factor=1,
        )
        ctx.add_cookies([{"name": "ph_prefs", "value": cookie, "url": server.url}])
        try:
            page = ctx.new_page()
            deal, plan = PLANS[slug]
            open_deal(page, slug, deal)
            for _, text in plan[:1]:
                v = version(page)
                click_move(page, Move.parse(text))
                wait_version(page, v + 1)
            page.evaluate(
                "() => { window.scrollTo(0, 0);"
                " document.getElementById('announce').replaceChildren(); }"
            )
            DOCS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=DOCS / f"{slug}-390x844-{theme}.png", animations="disabled")
        finally:
            ctx.close()


@pytest.mark.skipif(
    not os.environ.get("UPDATE_SCREENSHOTS"),
    reason="makes docs/playing.md's screenshots: UPDATE_SCREENSHOTS=1 to write docs/screenshots/",
)
def test_readme_screenshots_of_picking_and_of_no_move_left(
    browser: Browser, server: Server
) -> None:
    """Quadrangle at 1280×800 with a card picked up, and Castle's End on a phone with no move
    left (Undo or End the game offered)."""
    guides = ".".join(f"guide-{slug}" for slug in PLANS)
    desk = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 800})
    desk.add_cookies([{"name": "ph_prefs", "value": guides, "url": server.url}])
    try:
        page = desk.new_page()
        open_deal(page, "quadrangle", 1)
        page.locator("#pile-t5 > li").last.click(position={"x": 10, "y": 6})
        expect(page.locator("#pile-t9.target")).to_have_count(1)
        page.screenshot(path=DOCS / "playing-1280x800.png", animations="disabled")
    finally:
        desk.close()
    phone = browser.new_context(
        base_url=server.url,
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
    )
    phone.add_cookies([{"name": "ph_prefs", "value": guides, "url": server.url}])
    try:
        page = phone.new_page()
        open_deal(page, "castles-end", 1)
        box = page.locator("#pile-t1 > li:last-child").bounding_box()
        assert box is not None
        x, y = box["x"] + box["width"] / 2, box["y"] + 10
        page.touchscreen.tap(x, y)
        page.touchscreen.tap(x, y)
        page.locator("#trap-dialog").get_by_role("button", name="Play it anyway").click()
        wait_version(page, 1)
        expect(page.locator("#game-status .stuck")).to_have_count(1)
        page.evaluate("() => document.getElementById('announce').replaceChildren()")
        page.screenshot(path=DOCS / "no-move-left-390x844.png", animations="disabled")
    finally:
        phone.close()


def test_the_home_cards_buttons_line_up(browser: Browser, server: Server) -> None:
    """Issue 23: on the home page the five cards' buttons did not line up (blurbs differ). (On
    a phone the cards stand one under another: nothing to line up.)"""
    ctx = browser.new_context(base_url=server.url, viewport=SIZES[0])
    try:
        page = ctx.new_page()
        page.goto("/")
        cards = page.locator(".game-card")
        rows: dict[float, list[float]] = {}
        for i in range(cards.count()):
            card = cards.nth(i)
            top = card.bounding_box()
            button = card.get_by_role("button", name="New rated game").bounding_box()
            assert top is not None and button is not None
            rows.setdefault(round(top["y"]), []).append(round(button["y"]))
        assert len(rows) < cards.count()  # cards side by side
        for tops in rows.values():
            assert len(set(tops)) == 1, f"buttons at {tops} in one row of cards"
    finally:
        ctx.close()
