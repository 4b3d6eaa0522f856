"""The phone as good as the desktop (issue 23), on a 390×844 touch screen: a finger drag moves a
card on the big tables (and never navigates away), rooms and race boards fit the screen with
Resign in reach."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, CDPSession, Page, ViewportSize, expect

from tests.e2e.axe import assert_clean_in_both_themes
from tests.e2e.conftest import Server
from tests.e2e.helpers import game_json, open_deal, version, wait_version

pytestmark = pytest.mark.e2e

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture()
def phone(browser: Browser, server: Server) -> Iterator[BrowserContext]:
    ctx = browser.new_context(
        base_url=server.url,
        viewport=PHONE,
        has_touch=True,
        is_mobile=True,
    )
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


def touch_drag(cdp: CDPSession, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A finger put down at ``start``, moved in small steps to ``end`` and lifted: real touch
    events, which the browser may take for a scroll or a swipe unless the page says otherwise."""
    (x0, y0), (x1, y1) = start, end
    point = {"x": x0, "y": y0}
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
    for i in range(1, 16):
        x, y = x0 + (x1 - x0) * i / 15, y0 + (y1 - y0) * i / 15
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
        )
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def centre(page: Page, selector: str, top: bool = False) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2, box["y"] + (8 if top else box["height"] / 2)


# Found with the engine: after one deal from the stock the waste card goes to the foundation,
# sideways across the table (the drag that once sent the browser Back).
WASTE_TO_FOUNDATION = {"quadrangle": (16, "f2"), "quadruple-interchange": (8, "f1")}


@pytest.mark.parametrize("slug", list(WASTE_TO_FOUNDATION))
def test_a_finger_drags_the_waste_card_to_a_foundation(phone: BrowserContext, slug: str) -> None:
    deal, foundation = WASTE_TO_FOUNDATION[slug]
    page = phone.new_page()
    game_id = open_deal(page, slug, deal)
    url = page.url
    page.locator("#pile-stock").tap()
    wait_version(page, 1)
    card = game_json(page, game_id)["piles"]["waste"]["cards"][-1]
    # The foundation may lie off the right of the screen: the drag scrolls the table there.
    cdp = phone.new_cdp_session(page)
    start = centre(page, "#pile-waste > li:last-child", top=True)
    page.locator(f"#pile-{foundation}").scroll_into_view_if_needed()
    end = centre(page, f"#pile-{foundation}")
    page.locator("#pile-waste").scroll_into_view_if_needed()
    start = centre(page, "#pile-waste > li:last-child", top=True)
    touch_drag(cdp, start, end)
    wait_version(page, 2)
    assert game_json(page, game_id)["piles"][foundation]["cards"][-1] == card
    assert page.url == url
    # A drag that lands on no pile says why and changes nothing.
    page.locator("#pile-stock").tap()
    wait_version(page, 3)
    start = centre(page, "#pile-waste > li:last-child", top=True)
    touch_drag(cdp, start, (start[0], 4))  # onto the site's header: no pile there
    expect(page.locator("#announce")).to_contain_text("dropped off the piles")
    assert version(page) == 3 and page.url == url


def test_a_swipe_on_the_felt_scrolls_the_table_and_back_shows_the_board_as_it_is(
    phone: BrowserContext,
) -> None:
    page = phone.new_page()
    open_deal(page, "quadrangle", 16)
    url = page.url
    wrap = page.locator(".board-wrap")
    assert wrap.evaluate("e => e.scrollWidth > e.clientWidth"), "the big table fits: no test"
    assert wrap.evaluate("e => e.scrollLeft") == 0
    # The free felt between the waste and the first foundation: no card there.
    waste = page.locator("#pile-waste").bounding_box()
    assert waste is not None
    start = (waste["x"] + waste["width"] + 12, waste["y"] + waste["height"] / 2)
    touch_drag(phone.new_cdp_session(page), start, (start[0] - 200, start[1]))
    page.wait_for_function("() => document.querySelector('.board-wrap').scrollLeft > 50")
    assert version(page) == 0 and page.url == url
    # A move, another page, then Back: the board as it is now, not as first loaded.
    page.locator("#pile-stock").tap()
    wait_version(page, 1)
    page.goto("/rules")
    page.go_back()
    page.wait_for_selector("#game-status")
    assert page.url == url and version(page) == 1


FITS = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def test_a_race_on_two_phones_fits_and_resign_is_in_reach(
    browser: Browser, server: Server, screenshots: Path
) -> None:
    host, guest = (
        browser.new_context(
            base_url=server.url,
            viewport=PHONE,
            has_touch=True,
            is_mobile=True,
        )
        for _ in range(2)
    )
    try:
        a, b = host.new_page(), guest.new_page()
        for p in (a, b):
            p.set_default_timeout(30_000)
        a.goto("/")
        card = a.locator(".game-card", has_text="Quadruple Interchange")
        card.get_by_role("button", name="Race friends (new room)").click()
        a.wait_for_url(re_room := re.compile(r"/rooms/[A-Z0-9]{6}$"))
        link = a.url
        b.goto(link)
        b.get_by_role("button", name="Join this room").click()
        b.wait_for_url(re_room)
        expect(a.locator("#room-members > li")).to_have_count(2)
        a.get_by_role("button", name="Start the race").click()
        a.wait_for_selector("#my-board")
        expect(b.locator("#my-board")).to_be_visible()
        for p in (a, b):
            assert p.evaluate(FITS), "the room page is wider than the phone"
        b.screenshot(path=screenshots / "phone-room.png", animations="disabled")
        assert_clean_in_both_themes(b, "a room with a race on, on a phone")
        a.locator("#my-board").click()
        a.wait_for_selector("#game-status")
        assert a.evaluate(FITS), "race board wider than the phone"
        # The opponents' progress is in view while playing, without scrolling.
        strip = a.locator(".race-panel .racers")
        expect(strip).to_be_in_viewport()
        assert strip.locator("> li").count() == 2
        a.screenshot(path=screenshots / "phone-race-board.png", animations="disabled")
        assert_clean_in_both_themes(a, "a race board on a phone")
        # A spectator's view of a racer's board (desktop size), and the room they watch from.
        watcher = browser.new_context(base_url=server.url)
        try:
            w = watcher.new_page()
            w.goto(link)
            assert_clean_in_both_themes(w, "a room seen by a spectator")
            w.locator(".racer-watch").first.click()
            w.wait_for_selector("#game-status")
            assert_clean_in_both_themes(w, "a spectator's board")
            expect(w.get_by_role("button", name="Play this deal again")).to_have_count(0)
        finally:
            watcher.close()
        a.once("dialog", lambda dialog: dialog.accept())
        a.get_by_role("button", name="Resign").click()
        expect(a.locator("#game-status")).to_have_class(re.compile("lost"))
    finally:
        host.close()
        guest.close()
