"""The rest of playing in a browser: refusals, stale boards, sharing a deal with another player,
winning, keyboard and touch details, preferences, playing without JavaScript, resuming games."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Literal

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from sqlalchemy import create_engine, update

from app.db.models import Game
from app.engine import State, dumps
from app.engine.cards import face
from tests.e2e.conftest import Server
from tests.e2e.helpers import (
    assert_board_matches,
    board,
    focus_pile,
    game_json,
    legal,
    mark_piles,
    open_deal,
    replaced_piles,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e


def _error_text(page: Page) -> str:
    error = page.locator("#announce .error")
    expect(error).to_be_visible()
    return error.inner_text()


@pytest.mark.parametrize(
    ("slug", "deal", "source", "target", "why"),
    [
        ("quadrangle", 1, "t1", "t2", "cannot go on"),
        ("quadruple-interchange", 1, "t1", "t2", "cannot go on"),
        ("corners", 1, "r1", "f1", "builds ♣ only"),
        ("castles-end", 1, "t1", "t2", "First choose the base"),
        ("patriarchs", 1, "r1", "f2", "builds ♦ only"),
    ],
)
def test_an_illegal_move_says_why_and_the_board_stays_right(
    page: Page, slug: str, deal: int, source: str, target: str, why: str, screenshots: Path
) -> None:
    game_id = open_deal(page, slug, deal)
    assert f"{source}-{target}" not in legal(page)
    v = version(page)
    page.locator(f"#pile-{source} > li").last.click()
    with page.expect_response(re.compile(r"/moves$")) as answer:
        page.locator(f"#pile-{target}").click()
    assert answer.value.status == 422
    assert why in _error_text(page)
    assert version(page) == v
    assert_board_matches(page, game_json(page, game_id))
    # Nothing stays picked up after the refusal.
    assert page.locator("#table .picked, #table .target").count() == 0
    page.screenshot(path=screenshots / f"{slug}-illegal-1280x800.png", animations="disabled")


def test_a_stale_board_is_put_right(context: BrowserContext, page: Page) -> None:
    """Two tabs on one game: a move from the tab that fell behind is refused and that tab
    is shown the board as it now is."""
    game_id = open_deal(page, "castles-end", 1)
    other = context.new_page()
    other.goto(f"/games/{game_id}")
    v = version(page)
    page.locator("#pile-t2 > li").last.click()
    page.locator("#pile-f1").click()
    wait_version(page, v + 1)
    with other.expect_response(re.compile(r"/moves$")) as answer:
        other.locator("#pile-t3 > li").last.click()
        other.locator("#pile-f2").click()
    assert answer.value.status == 409
    assert "changed since you saw it" in _error_text(other)
    assert version(other) == v + 1
    assert_board_matches(other, game_json(other, game_id))
    other.close()


def test_a_shared_deal_link_shows_a_second_player_the_same_layout(
    browser: Browser, server: Server, context: BrowserContext, page: Page
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    game_id = open_deal(page, "quadruple-interchange", 4242)
    mine = board(page)
    me = game_json(page, game_id)["player"]["name"]
    page.get_by_role("link", name="Share this deal").first.click()
    expect(page.locator("#announce")).to_contain_text("copied")
    link = page.evaluate("() => navigator.clipboard.readText()")
    assert link == f"{server.url}/deal/quadruple-interchange/4242"

    friend = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 800})
    try:
        theirs = friend.new_page()
        theirs.goto(link)
        expect(theirs.get_by_role("heading", level=1)).to_contain_text("deal 4242")
        theirs.get_by_role("button", name="Play this deal").click()
        theirs.wait_for_selector("#game-status")
        their_id = theirs.url.rsplit("/", 1)[1]
        assert their_id != game_id
        assert game_json(theirs, their_id)["player"]["name"] != me
        assert board(theirs) == mine
    finally:
        friend.close()


def _set_state(server: Server, game_id: str, state: State) -> None:
    """Put a game at a position near its end, straight into the database.

    The end-to-end server has no hidden-card guard (that runs in the test clients of
    tests/web), and nothing here replays the move log afterwards (no undo), so a stored state
    that no move sequence led to is safe for this test. It saves playing a whole game.
    """
    engine = create_engine(server.database_url)
    try:
        with engine.begin() as db:
            db.execute(update(Game).where(Game.id == game_id).values(state=dumps(state)))
    finally:
        engine.dispose()


def _castles_end_one_card_from_winning() -> State:
    # Base rank Ace: ♣ ♦ ♥ complete, ♠ up to the Queen, the King of spades left on t1.
    clubs, diamonds, hearts = (tuple(face(r, s) for r in range(1, 14)) for s in range(3))
    spades = tuple(face(r, 3) for r in range(1, 13))
    piles = (clubs, diamonds, hearts, spades, (face(13, 3),), *([()] * 9))
    return State("castles-end", piles)


def _patriarchs_one_card_from_winning() -> State:
    ups = [tuple(face(r, s) for r in range(1, 14)) for s in range(4)]
    downs = [tuple(face(r, s) for r in range(13, 0, -1)) for s in range(3)]
    downs.append(tuple(face(r, 3) for r in range(13, 1, -1)))  # ♠ down to the 2
    reserves = [(face(1, 3),), *([()] * 8)]  # the last Ace of spades on r1
    return State("patriarchs", ((), (), *ups, *downs, *reserves))


def test_winning_through_the_interface(page: Page, server: Server, screenshots: Path) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    game_id = open_deal(page, "castles-end", 77)
    _set_state(server, game_id, _castles_end_one_card_from_winning())
    page.reload()
    assert "t1-f4" in legal(page)
    v = version(page)
    page.locator("#pile-t1 > li").last.click()
    page.locator("#pile-f4").click()
    wait_version(page, v + 1)
    summary = page.locator(".summary")
    expect(summary.get_by_role("heading")).to_have_text("You won!")
    # The win summary: against the deal's records and the player's own wins (issue 23).
    expect(summary.locator(".compare")).to_contain_text("Fewest moves on this deal: yours")
    expect(summary.locator(".compare")).to_contain_text("Your first win of Castle's End")
    expect(page.locator("#announce")).to_contain_text("You won!")
    assert game_json(page, game_id)["status"] == "won"
    assert page.locator("#pile-f4").get_attribute("data-count") == "13"
    page.screenshot(path=screenshots / "castles-end-won-1280x800.png", animations="disabled")
    summary.get_by_role("link", name="Share this deal").click()
    assert page.evaluate("() => navigator.clipboard.readText()").endswith("/deal/castles-end/77")
    summary.get_by_role("button", name="Play this deal again").click()
    page.wait_for_url(re.compile(r"/games/(?!" + re.escape(game_id) + r")[A-Za-z0-9_-]+$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("deal 77")
    assert game_json(page, page.url.rsplit("/", 1)[1])["version"] == 0


def test_winning_by_double_click(page: Page, server: Server) -> None:
    game_id = open_deal(page, "patriarchs", 78)
    _set_state(server, game_id, _patriarchs_one_card_from_winning())
    page.reload()
    v = version(page)
    page.locator("#pile-r1 > li").dblclick()
    wait_version(page, v + 1)
    expect(page.locator(".summary h2")).to_have_text("You won!")
    expect(page.locator(".summary").get_by_role("button", name="New rated game")).to_be_visible()
    # A finished game takes no more moves: the move controls are gone.
    expect(page.locator("#move-form")).to_be_hidden()
    expect(page.get_by_role("button", name="Undo")).to_be_hidden()


def test_keyboard_only_play(page: Page) -> None:
    """Arrows move between piles, Enter picks and drops, Esc cancels, F sends to a
    foundation, D deals, U undoes; the announcements say what happened."""
    game_id = open_deal(page, "quadrangle", 1)
    page.locator("#pile-t1").focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement.id") == "pile-t2"
    page.keyboard.press("ArrowUp")
    assert page.evaluate("() => document.activeElement.id") == "pile-waste"
    focus_pile(page, "t5")
    page.keyboard.press("Enter")
    expect(page.locator("#announce")).to_contain_text("Picked up 9 of spades")
    assert page.locator("#pile-t9.target").count() == 1
    page.keyboard.press("Escape")
    assert page.locator("#table .picked").count() == 0
    expect(page.locator("#announce")).to_contain_text("Put back")
    # Pick up, walk to t9, drop.
    v = version(page)
    page.keyboard.press("Enter")
    focus_pile(page, "t9")
    page.keyboard.press("Enter")
    wait_version(page, v + 1)
    assert page.evaluate("() => document.activeElement.id") == "pile-t9"
    assert game_json(page, game_id)["piles"]["t9"]["cards"][-1] == "9S"
    # The clock runs from the first move.
    expect(page.locator("#clock")).not_to_have_text("0:00", timeout=30_000)
    # Undo with U takes it back.
    page.keyboard.press("u")
    wait_version(page, v + 2)
    assert game_json(page, game_id)["piles"]["t5"]["cards"][-1] == "9S"
    # Deal with D: the dealt card is named.
    page.keyboard.press("d")
    wait_version(page, v + 3)
    expect(page.locator("#announce")).to_contain_text("Dealt")
    # A deal turned up a card, so U cannot take it back, and the page says so.
    page.keyboard.press("u")
    expect(page.locator("#announce .error")).to_contain_text("turned up a card you had not seen")
    assert version(page) == v + 3
    state = game_json(page, game_id)
    assert_board_matches(page, state)


def test_resign_then_a_new_deal(page: Page) -> None:
    game_id = open_deal(page, "corners", 5)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator(".summary h2")).to_have_text("Game over")
    assert game_json(page, game_id)["status"] == "lost"
    expect(page.locator("#announce")).to_contain_text("You resigned")
    page.locator(".summary").get_by_role("button", name="New rated game").click()
    page.wait_for_url(re.compile(r"/games/(?!" + re.escape(game_id) + r")[A-Za-z0-9_-]+$"))
    fresh = game_json(page, page.url.rsplit("/", 1)[1])
    assert fresh["game"] == "corners" and fresh["status"] == "playing"
    assert fresh["rated"] is True  # the server drew it
    expect(page.locator(".by .kind")).to_have_text("Rated")


def test_keyboard_picks_a_longer_run_with_each_press(page: Page) -> None:
    open_deal(page, "quadruple-interchange", 16)
    v = version(page)
    page.locator("#pile-t1 > li").last.click()
    page.locator("#pile-t4").click()
    wait_version(page, v + 1)
    focus_pile(page, "t4")
    page.keyboard.press("Enter")
    assert page.locator("#pile-t4 > li.picked").count() == 1
    page.keyboard.press("Enter")
    assert page.locator("#pile-t4 > li.picked").count() == 2
    expect(page.locator("#announce")).to_contain_text("2 cards from")
    assert page.locator("#pile-t1.target").count() == 1
    # Clicking the lower card of the run picks the same run with the mouse.
    page.keyboard.press("Escape")
    page.locator("#pile-t4 > li").nth(-2).click(position={"x": 8, "y": 5})
    assert page.locator("#pile-t4 > li.picked").count() == 2


def test_double_tap_and_touch_drag_on_a_phone(browser: Browser, server: Server) -> None:
    phone = browser.new_context(
        base_url=server.url,
        viewport={"width": 360, "height": 740},
        has_touch=True,
        is_mobile=True,
    )
    try:
        page = phone.new_page()
        game_id = open_deal(page, "corners", 1)
        # Corners deal 1: A♣ on r5 goes onto K♣ on f1 (the foundations wrap).
        v = version(page)
        box = page.locator("#pile-r5 > li").bounding_box()
        assert box is not None
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.touchscreen.tap(x, y)  # a double-tap: two taps in one place
        page.touchscreen.tap(x, y)
        wait_version(page, v + 1)
        assert game_json(page, game_id)["piles"]["f1"]["cards"] == ["KC", "AC"]
        # A finger drag: deal, then drag with touch events the dealt card where it fits.
        open_deal(page, "castles-end", 1)
        v = version(page)
        cdp = phone.new_cdp_session(page)
        start = page.locator("#pile-t2 > li").last.bounding_box()
        end = page.locator("#pile-f1").bounding_box()
        assert start is not None and end is not None
        x0, y0 = start["x"] + start["width"] / 2, start["y"] + 6
        x1, y1 = end["x"] + end["width"] / 2, end["y"] + end["height"] / 2
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]}
        )
        for i in range(1, 11):
            x, y = x0 + (x1 - x0) * i / 10, y0 + (y1 - y0) * i / 10
            cdp.send(
                "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
            )
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        wait_version(page, v + 1)
        assert page.locator("#pile-f1 > li").get_attribute("aria-label") == "ace of clubs"
    finally:
        phone.close()


def test_auto_move_sends_cards_up_one_move_at_a_time(
    context: BrowserContext, page: Page, server: Server
) -> None:
    game_id = open_deal(page, "corners", 3)
    page.get_by_text("Preferences").click()
    page.get_by_label("Move cards to the foundations automatically").check()
    # The box posts the preferences; the cookie comes with the answer, a moment later.
    deadline = time.monotonic() + 30
    while not any(c["name"] == "ph_prefs" and c["value"] == "auto" for c in context.cookies()):
        assert time.monotonic() < deadline, context.cookies()
        page.wait_for_timeout(100)
    before = game_json(page, game_id)
    v = version(page)
    mark_piles(page)
    # Corners deal 3: after r3-f3, four more cards can each go to just one foundation.
    page.locator("#pile-r3 > li").click()
    page.locator("#pile-f3").click()
    wait_version(page, v + 5)
    expect(page.locator("#announce")).to_contain_text("Auto-moved")
    after = game_json(page, game_id)
    assert after["moves"] == 5  # each card it sent is an ordinary move of its own
    # One fragment brought every pile those moves changed, and only those.
    assert replaced_piles(page) == {
        p for p in before["piles"] if before["piles"][p] != after["piles"][p]
    }
    assert_board_matches(page, after)


def test_playing_without_javascript(browser: Browser, server: Server) -> None:
    plain = browser.new_context(base_url=server.url, java_script_enabled=False)
    try:
        page = plain.new_page()
        page.goto("/deal/castles-end/1")
        page.get_by_role("button", name="Play this deal").click()
        page.wait_for_selector("#game-status")
        assert page.get_attribute("#game-status", "data-version") == "0"
        page.select_option("select[name=from]", "t2")
        page.select_option("select[name=to]", "f1")
        page.get_by_role("button", name="Move", exact=True).click()
        page.wait_for_selector('#game-status[data-version="1"]')
        expect(page.locator("#announce")).to_contain_text("Moved A♣")
        # The legal moves are offered as buttons too; an illegal choice is explained.
        page.select_option("select[name=from]", "t1")
        page.select_option("select[name=to]", "t2")
        page.get_by_role("button", name="Move", exact=True).click()
        expect(page.locator("#announce .error")).to_contain_text("cannot go on")
        page.get_by_role("button", name="Undo").click()
        page.wait_for_selector('#game-status[data-version="2"]')
        assert page.locator("#pile-f1 > li").count() == 0
    finally:
        plain.close()


def test_my_games_follow_the_player_to_another_device(browser: Browser, server: Server) -> None:
    laptop = browser.new_context(base_url=server.url)
    phone = browser.new_context(base_url=server.url, viewport={"width": 360, "height": 740})
    try:
        page = laptop.new_page()
        game_id = open_deal(page, "corners", 31)
        name = game_json(page, game_id)["player"]["name"]
        page.goto("/account")
        page.get_by_label("Password", exact=True).first.fill("correct horse battery")
        page.get_by_role("button", name="Save").nth(1).click()
        other = phone.new_page()
        other.goto("/account")
        signin = other.locator("form[action='/signin']")
        signin.get_by_label("Name").fill(name)
        signin.get_by_label("Password").fill("correct horse battery")
        signin.get_by_role("button", name="Sign in").click()
        other.goto("/my-games")
        resume = other.locator(f"a[href='/games/{game_id}']")
        expect(resume).to_have_text("Resume")
        resume.click()
        other.wait_for_selector("#game-status")
        assert other.locator("form#move-form").count() == 1  # theirs to play
    finally:
        laptop.close()
        phone.close()


COUNT_ANIMATIONS = (
    "window.__slides = 0; const animate = Element.prototype.animate;"
    "Element.prototype.animate = function (...a) {"
    " window.__slides++; return animate.apply(this, a); };"
)


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_cards_slide_into_place_unless_motion_is_reduced(
    browser: Browser, server: Server, motion: Literal["no-preference", "reduce"]
) -> None:
    context = browser.new_context(base_url=server.url, reduced_motion=motion)
    try:
        context.add_init_script(COUNT_ANIMATIONS)
        page = context.new_page()
        open_deal(page, "castles-end", 1)
        v = version(page)
        page.locator("#pile-t2 > li").last.click()
        page.locator("#pile-f1").click()
        wait_version(page, v + 1)
        slides = page.evaluate("() => window.__slides")
        assert (slides > 0) if motion == "no-preference" else (slides == 0)
    finally:
        context.close()
