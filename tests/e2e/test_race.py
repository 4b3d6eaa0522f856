"""A race in real browsers: two players race on one room link (one of them anonymous, the
other with a chosen name), a third person spectates; the room pages change live through the
htmx SSE extension (no reloads), and the finish table shows the standings in order."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from app.engine import Move
from tests.e2e.conftest import Server
from tests.e2e.helpers import click_move, legal, people, version, wait_version

pytestmark = pytest.mark.e2e


def _name(page: Page) -> str:
    page.goto("/account")
    value = page.locator('input[name="name"]').first.get_attribute("value")
    assert value
    return value


def _choose_name(page: Page, name: str) -> None:
    page.goto("/account")
    page.locator('input[name="name"]').first.fill(name)
    page.locator('input[name="name"]').first.press("Enter")
    expect(page.locator("body")).to_contain_text(f"You are now {name}")


def _mark(page: Page) -> None:
    page.evaluate("() => { window.__noReload = true; }")


def _not_reloaded(page: Page) -> bool:
    return bool(page.evaluate("() => window.__noReload === true"))


def _play_one(page: Page) -> None:
    """A legal move on the racer's board, a foundation move if there is one."""
    moves = legal(page)
    assert moves, "a legal move"
    chosen = next((m for m in moves if "-f" in m), moves[0])
    before = version(page)
    click_move(page, Move.parse(chosen))
    wait_version(page, before + 1)


def test_two_racers_and_a_spectator(browser: Browser, server: Server, screenshots: Path) -> None:
    errors: list[str] = []
    contexts, (anon, named, watcher) = people(browser, server.url, 3, errors)
    try:
        named_name = f"Racer{secrets.token_hex(3)}"
        _choose_name(named, named_name)

        # The anonymous player opens a room from the home page and shares its link.
        anon.goto("/")
        corners = anon.locator(".game-card", has_text="Corners")
        corners.get_by_role("button", name="Race friends (new room)").click()
        anon.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$"))
        link = anon.url
        # Opening the room made the visitor a player (players are made when they first act);
        # they stay anonymous, with a random name.
        anon_name = _name(anon)
        anon.goto(link)

        named.goto(link)
        named.get_by_role("button", name="Join this room").click()
        named.wait_for_url(link)
        watcher.goto(link)
        for p in (anon, watcher):
            _mark(p)
        # The join reached the others' open pages without a reload.
        for p in (anon, watcher):
            expect(p.locator("#room-members")).to_contain_text(named_name)
        expect(watcher.get_by_role("button", name="Join this room")).to_be_visible()

        anon.get_by_role("button", name="Start the race").click()
        anon.wait_for_selector("#my-board")
        _mark(anon)
        # The race reaches the other racer and the spectator live: a board link, the rows.
        expect(named.locator("#my-board")).to_be_visible()
        expect(watcher.locator("#racers > li")).to_have_count(2)
        expect(watcher.locator(".racer-watch")).to_have_count(2)
        expect(named.locator(".racer-watch")).to_have_count(0)
        assert _not_reloaded(watcher)
        expect(watcher.locator("#countdown")).to_have_text(re.compile("Go!"), timeout=30_000)

        # Each racer goes to their own board; the anonymous one plays, the other resigns.
        board = contexts[0].new_page()
        board.on("pageerror", lambda exc: errors.append(str(exc)))
        board.goto(anon.locator("#my-board").get_attribute("href") or "")
        anon_game = board.url.rsplit("/", 1)[1]
        # Hints are off in races: no Hint button, a note says so, and the H key does nothing.
        expect(board.get_by_role("button", name="Hint")).to_have_count(0)
        expect(board.locator("#hint-note")).to_contain_text("Hints are off in races")
        board.keyboard.press("h")
        _play_one(board)
        row = watcher.locator(f"#racer-{anon_game}")
        expect(row).to_have_attribute("data-moves", "1")
        _play_one(board)
        expect(row).to_have_attribute("data-moves", "2")
        assert _not_reloaded(watcher)
        screenshot = screenshots / "race-spectator.png"
        watcher.screenshot(path=str(screenshot), full_page=True)

        # The spectator watches the racer's board (public view).
        spy = contexts[2].new_page()
        spy.goto(row.locator(".racer-watch").get_attribute("href") or "")
        expect(spy.locator("#game-status")).to_have_attribute("data-version", "2")
        _play_one(board)
        expect(spy.locator("#game-status")).to_have_attribute("data-version", "3")

        named_board = contexts[1].new_page()
        named_board.goto(named.locator("#my-board").get_attribute("href") or "")
        # The racer's own board shows the race beside it, live.
        named_game = named_board.url.rsplit("/", 1)[1]
        other_row = board.locator(f".race-panel #racer-{named_game}")
        expect(other_row).to_have_attribute("data-moves", "0")
        expect(board.locator(f".race-panel #racer-{anon_game}")).to_have_attribute(
            "data-moves", "3"
        )
        board.screenshot(path=str(screenshots / "race-board.png"), full_page=True)
        named_board.once("dialog", lambda dialog: dialog.accept())
        named_board.get_by_role("button", name="Resign").click()
        expect(named_board.locator("#game-status")).to_have_class(re.compile("lost"))
        expect(other_row).to_have_class(re.compile("lost"))  # live, on the other racer's board
        board.once("dialog", lambda dialog: dialog.accept())
        board.get_by_role("button", name="Resign").click()
        expect(board.locator("#game-status")).to_have_class(re.compile("lost"))

        # The finish table appears on every room page, live, in the standings' order.
        answer = watcher.request.get(f"/api/rooms/{link.rsplit('/', 1)[1]}")
        standings = answer.json()["race"]["standings"]
        mine = next(s for s in standings if s["player"] == anon_name)
        theirs = next(s for s in standings if s["player"] == named_name)
        # Nobody won: more cards on the foundations first, then fewer moves.
        anon_first = (mine["foundation_cards"], -mine["moves"]) > (
            theirs["foundation_cards"],
            -theirs["moves"],
        )
        expected = [anon_name, named_name] if anon_first else [named_name, anon_name]
        for p in (watcher, anon, named):
            table = p.locator("#finish-table tbody tr")
            expect(table).to_have_count(2)
            assert [table.nth(i).locator("td").nth(1).inner_text() for i in range(2)] == expected
        assert _not_reloaded(watcher) and _not_reloaded(anon)
        expect(anon.get_by_role("button", name="Rematch (new deal)")).to_be_visible()
        watcher.screenshot(path=str(screenshots / "race-finished.png"), full_page=True)
    finally:
        for c in contexts:
            c.close()
    assert not errors, errors
