"""Competition in real browsers: a player plays the daily challenge and sees the standings and
their streak; two players from two addresses race a stranger (rated) and both see their new
rating; an event with three players shows its standings changing live."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import create_engine, select

from app.cli import main
from app.config import Settings
from app.db.models import DealVerdict, Game
from app.engine import DEVELOPMENT_KEY, Move
from tests.e2e.conftest import Server
from tests.e2e.helpers import click_move, people, version, wait_version

pytestmark = pytest.mark.e2e

GAME = "corners"


def _settings(server: Server) -> Settings:
    return Settings(database_url=server.database_url, deal_key=DEVELOPMENT_KEY.decode())


@pytest.fixture(scope="module")
def certified(arena: Server) -> None:
    """Certified Corners deals in the server's database (the challenge and events draw them)."""
    assert (
        main(["certify", "--game", GAME, "--count", "12", "--nodes", "50000"], _settings(arena))
        == 0
    )


def _solution(server: Server, game_id: str) -> list[str]:
    engine = create_engine(server.database_url)
    try:
        with engine.connect() as db:
            deal = db.scalar(select(Game.deal).where(Game.id == game_id))
            text = db.scalar(
                select(DealVerdict.solution).where(
                    DealVerdict.game == GAME, DealVerdict.deal == deal
                )
            )
    finally:
        engine.dispose()
    assert text
    return str(text).split()


def _win(page: Page, server: Server) -> None:
    """Plays the solver's line on the board in front of the player: the moves up to the last
    one sent as the board's own form posts, the winning one clicked."""
    game_id = page.url.rsplit("/", 1)[1]
    line = _solution(server, game_id)
    csrf = page.evaluate(
        "() => JSON.parse(document.body.getAttribute('hx-headers'))['x-csrftoken']"
    )
    v = version(page)
    for notation in line[:-1]:
        answer = page.request.post(
            f"/games/{game_id}/moves",
            form={"version": str(v), "move": notation},
            headers={"x-csrftoken": csrf, "HX-Request": "true"},
        )
        assert answer.ok, answer.text()
        v += 1
    page.reload()
    wait_version(page, v)
    click_move(page, Move.parse(line[-1]))
    wait_version(page, v + 1)


def test_the_daily_challenge_is_played_and_the_standings_and_streak_shown(
    browser: Browser, arena: Server, certified: None, screenshots: Path
) -> None:
    errors: list[str] = []
    # A player in India (UTC+5:30): the day ends at midnight UTC, 05:30 on their clock.
    contexts, (player,) = people(browser, arena.url, 1, errors, timezone_id="Asia/Kolkata")
    try:
        player.goto("/")
        player.locator(f'a[href="/daily/{GAME}/challenge"]').click()
        expect(player.locator("h1")).to_contain_text("daily challenge")
        expect(player.locator("#challenge-streak")).to_contain_text("0 days")
        player.get_by_role("button", name="Play today's challenge").click()
        player.wait_for_url(re.compile(r"/games/[A-Za-z0-9_-]+$"))
        player.wait_for_selector("#game-status")
        _win(player, arena)
        player.goto(f"/daily/{GAME}/challenge")
        row = player.locator("#standings tbody tr").first
        expect(row).to_contain_text("won")
        expect(row.locator("td").first).to_have_text("1")
        expect(player.locator("#challenge-streak")).to_contain_text("1 day won")
        # Local time: the end of the day is written by the browser in the player's zone, and
        # the countdown to it too.
        ends = player.locator("time[data-local]").first
        expect(ends).not_to_contain_text("UTC")
        expect(ends).to_contain_text("5:30")
        expect(player.locator("[data-countdown]")).to_have_text(re.compile(r"^in \d+ h \d\d min$"))
        player.screenshot(path=str(screenshots / "challenge.png"), full_page=True)
        assert not errors, errors
    finally:
        for c in contexts:
            c.close()


def test_two_strangers_race_rated_and_both_see_their_new_rating(
    browser: Browser, arena: Server, screenshots: Path
) -> None:
    errors: list[str] = []
    contexts, pages = people(browser, arena.url, 2, errors)
    try:
        for context, address in zip(contexts, ("198.51.100.21", "203.0.113.42"), strict=True):
            context.set_extra_http_headers({"X-Forwarded-For": address})
        first, second = pages
        for page in pages:
            page.goto("/")
        first.locator(f'form[action="/races/queue"]:has(input[value="{GAME}"]) button').click()
        first.wait_for_url("**/races/queue")
        expect(first.locator(".queue-waiting")).to_have_text("1")
        second.locator(f'form[action="/races/queue"]:has(input[value="{GAME}"]) button').click()
        second.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$"))
        first.wait_for_url(re.compile(r"/rooms/[A-Z0-9]{6}$"))  # the waiting page's poll
        assert first.url == second.url
        expect(first.locator(".rated-race")).to_be_visible()
        for page in pages:  # both leave the race: forfeits, a tie for the ratings
            page.get_by_role("button", name=re.compile("Leave", re.I)).first.click()
        for page in pages:
            page.goto("/account")
            name = page.locator('input[name="name"]').first.get_attribute("value")
            page.goto(f"/players/{name}")
            expect(page.locator("#race-ratings .race-rating")).to_have_count(1)
        pages[0].screenshot(path=str(screenshots / "race-rating.png"), full_page=True)
        assert not errors, errors
    finally:
        for c in contexts:
            c.close()


def test_an_event_with_three_players_shows_live_standings(
    browser: Browser, arena: Server, certified: None, screenshots: Path
) -> None:
    starts = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    args = ["event", "create", "--game", GAME, "--starts", starts, "--minutes", "60"]
    assert main(args, _settings(arena)) == 0
    errors: list[str] = []
    contexts, pages = people(browser, arena.url, 3, errors)
    try:
        pages[0].goto("/")
        pages[0].locator("#events a").last.click()
        event_url = pages[0].url
        for page in pages:
            page.goto(event_url)
            page.get_by_role("button", name="Join").click()
            page.wait_for_url(event_url)
        watcher = pages[2]
        watcher.goto(event_url)
        expect(watcher.locator("#event-standings tbody tr")).to_have_count(3)
        watcher.evaluate("() => { window.__noReload = true; }")
        player = pages[0]
        player.get_by_role("button", name="Play my next deal").click()
        player.wait_for_url(re.compile(r"/games/[A-Za-z0-9_-]+$"))
        player.wait_for_selector("#game-status")
        _win(player, arena)
        # The watcher's page changes by itself: 2 points for the win, first place.
        expect(watcher.locator("#event-standings tbody tr").first.locator(".points")).to_have_text(
            "2"
        )
        assert watcher.evaluate("() => window.__noReload === true")
        watcher.screenshot(path=str(screenshots / "event-live.png"), full_page=True)
        assert not errors, errors
    finally:
        for c in contexts:
            c.close()
