"""The phone as good as the desktop (issue 23), on a 390×844 touch screen: a finger drag moves a
card on the big tables (and never navigates away), rooms and race boards fit the screen with
Resign in reach."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, CDPSession, Page, expect

from tests.e2e.conftest import Server
from tests.e2e.helpers import game_json, open_deal, version, wait_version

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}


@pytest.fixture()
def phone(browser: Browser, server: Server) -> Iterator[BrowserContext]:
    ctx = browser.new_context(
        base_url=server.url,
        viewport=PHONE,
        has_touch=True,
        is_mobile=True,  # type: ignore[arg-type]
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
    touch_drag(cdp, start, (start[0], 835))
    expect(page.locator("#announce")).to_contain_text("dropped off the piles")
    assert version(page) == 3 and page.url == url
