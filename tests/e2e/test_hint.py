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


def test_a_hint_turns_the_rated_badge_casual_at_once(page: Page) -> None:
    page.goto("/")
    card = page.locator(".game-card", has_text="Castle's End")
    card.get_by_role("button", name="New rated game").click()
    page.wait_for_selector("#game-status")
    expect(page.locator("#game-kind")).to_have_text("Rated")
    page.get_by_role("button", name="Hint").click()
    # (a random deal may already be lost: the hint then says so, and still counts as one)
    expect(page.locator("#announce")).not_to_be_empty(timeout=60_000)
    expect(page.locator("#game-kind")).to_have_text("Casual")
