"""Tried as a new player would: finish games in the browser, then find yourself on the
leaderboard, on the deal page, and in a replay stepped through with the keyboard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import game_json, open_deal, wait_version

pytestmark = pytest.mark.e2e

DEAL = 424242


def _deal_then_resign(page: Page, slug: str, deal: int | None = None) -> str:
    """A game dealt and resigned after one deal from the stock: of a chosen deal (casual), or
    the server's draw from the home page's *New rated game* (rated)."""
    if deal is None:
        page.goto("/")
        card = page.locator(".game-card", has=page.locator(f'input[value="{slug}"]'))
        card.get_by_role("button", name="New rated game").click()
        page.wait_for_url(re.compile(r"/games/[A-Za-z0-9_-]+$"))
        page.wait_for_selector("#game-status")
        game_id = page.url.rsplit("/", 1)[1]
    else:
        game_id = open_deal(page, slug, deal)
    page.get_by_role("button", name="Deal").first.click()
    wait_version(page, 1)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").first.click()
    expect(page.locator("#game-status")).to_have_class(re.compile(r"\blost\b"))
    return game_id


def test_a_new_player_finds_their_record_on_the_leaderboard_deal_page_and_replay(
    page: Page, screenshots: Path
) -> None:
    rated = _deal_then_resign(page, "corners")
    expect(page.locator(".by .kind")).to_have_text("Rated")
    _deal_then_resign(page, "patriarchs")
    first = _deal_then_resign(page, "corners", DEAL)  # casual: not on the leaderboard
    expect(page.locator(".by .kind")).to_have_text("Casual")
    name = game_json(page, rated)["player"]["name"]

    page.goto("/leaderboard")
    row = page.locator("table.results tbody tr", has_text=name)
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(2)).to_have_text("2")  # played: the two rated games
    expect(row.locator("td").nth(3)).to_have_text("0")  # won
    page.screenshot(path=str(screenshots / "new-player-leaderboard-1280x800.png"))

    page.goto(f"/deal/corners/{DEAL}")
    finished = page.locator("table.results tbody tr", has_text=name)
    expect(finished).to_have_count(1)
    finished.get_by_role("link", name="Replay").click()
    page.wait_for_url(re.compile(rf"/games/{first}/replay"))
    expect(page.locator("#replay-controls")).to_have_attribute("data-last", "1")

    page.keyboard.press("Home")
    page.wait_for_url(re.compile(r"step=0$"))
    expect(page.locator("#pile-waste li")).to_have_count(0)
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(r"step=1$"))
    # Every card is shown once the game is over: the dealt card is on the waste, face up.
    expect(page.locator("#pile-waste li:not(.b)")).to_have_count(1)
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(r"step=0$"))
    page.screenshot(path=str(screenshots / "new-player-replay-1280x800.png"))

    page.goto(f"/players/{name}")
    expect(page.get_by_role("heading", name=name)).to_be_visible()
