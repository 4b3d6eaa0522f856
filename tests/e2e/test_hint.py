"""The Hint button and the H key in a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import open_deal

pytestmark = pytest.mark.e2e


def test_the_h_key_and_the_hint_button_say_a_hint(page: Page) -> None:
    open_deal(page, "castles-end", 1)
    expect(page.locator("#hint-note")).to_contain_text("casual")
    page.locator("body").press("h")
    expect(page.locator("#announce")).to_contain_text("Hint: move", timeout=60_000)
    expect(page.locator("#announce")).to_contain_text("This position can be won")
    page.get_by_role("button", name="Hint").click()
    expect(page.locator("#announce")).to_contain_text("Hint: move", timeout=60_000)
