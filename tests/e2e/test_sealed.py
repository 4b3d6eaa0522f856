"""Sealed deals in real browsers (contract v3): a rated board shows no deal number until it
ends, and a spectator watching the leader of a race never sees a card the trailing racer has not
seen — the leader's dealt cards stay face down on the spectator's page until the trailing racer
has dealt them too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import Server
from tests.e2e.helpers import board, people, version, wait_version

pytestmark = pytest.mark.e2e


def _deal(page: Page) -> None:
    before = version(page)
    page.get_by_role("button", name="Deal", exact=True).click()
    wait_version(page, before + 1)


def _faces(page: Page) -> set[str]:
    return {c for pile in board(page).values() for c in pile["cards"] if c is not None}


def test_a_rated_board_shows_its_number_only_once_it_ends(page: Page) -> None:
    page.goto("/")
    card = page.locator(".game-card", has_text="Patriarchs")
    card.get_by_role("button", name="New rated game").click()
    page.wait_for_selector("#game-status")
    heading = page.locator("h1").inner_text()
    assert "rated deal" in heading
    html = page.content()
    title = page.title()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator("#game-status")).to_have_class(re.compile("lost"))
    page.reload()
    shown = re.search(r"deal (\d+)", page.locator("h1").inner_text())
    assert shown is not None, "the number shows once the game is over"
    number = shown.group(1)
    assert number not in html and number not in title, "the number showed while in play"


def test_a_spectator_sees_only_what_the_trailing_racer_has_seen(
    browser: Browser, server: Server, screenshots: Path
) -> None:
    errors: list[str] = []
    contexts, (lead_room, trail_room, watcher) = people(browser, server.url, 3, errors)
    try:
        lead_room.goto("/")
        corners = lead_room.locator(".game-card", has_text="Corners")
        corners.get_by_role("button", name="Race friends (new room)").click()
        lead_room.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$"))
        link = lead_room.url
        trail_room.goto(link)
        trail_room.get_by_role("button", name="Join this room").click()
        trail_room.wait_for_url(link)
        lead_room.get_by_role("button", name="Start the race").click()
        lead_room.wait_for_selector("#my-board")
        expect(trail_room.locator("#my-board")).to_be_visible()
        expect(lead_room.locator("#countdown")).to_have_text(re.compile("Go!"), timeout=30_000)
        assert "deal sealed" in lead_room.locator("#race-title").inner_text()

        lead = contexts[0].new_page()
        lead.goto(lead_room.locator("#my-board").get_attribute("href") or "")
        trail = contexts[1].new_page()
        trail.goto(trail_room.locator("#my-board").get_attribute("href") or "")
        lead_game = lead.url.rsplit("/", 1)[1]
        trail_seen = _faces(trail)

        watcher.goto(link)
        row = watcher.locator(f"#racer-{lead_game}")
        watcher.goto(row.locator(".racer-watch").get_attribute("href") or "")
        expect(watcher.locator("#game-status")).to_be_visible()
        assert _faces(watcher) <= trail_seen

        # The leader deals three cards: the spectator sees them face down.
        for n in range(1, 4):
            _deal(lead)
            expect(watcher.locator("#game-status")).to_have_attribute("data-version", str(n))
            assert _faces(watcher) <= trail_seen, "a card only the leader has seen"
        # A spectator is offered nothing to do, and told no legal move (it could tell a card).
        expect(watcher.get_by_role("button", name="Undo")).to_have_count(0)
        assert watcher.get_attribute("#game-status", "data-moves") == "[]"
        waste = board(watcher)["waste"]
        assert waste["count"] == 3 and waste["cards"][-1] is None
        lead_waste = board(lead)["waste"]["cards"]
        watcher.screenshot(path=str(screenshots / "race-spectator-sealed.png"), full_page=True)

        # The trailing racer deals the same cards: now the spectator sees the leader's waste.
        for _ in range(3):
            _deal(trail)
            trail_seen |= _faces(trail)
        watcher.reload()
        expect(watcher.locator("#game-status")).to_be_visible()
        assert _faces(watcher) <= trail_seen
        assert board(watcher)["waste"]["cards"][-1] == lead_waste[-1]
    finally:
        for c in contexts:
            c.close()
    assert not errors, errors
