"""How playing feels (issue 13), in a real Chromium at desktop and phone sizes: a base choice
that leaves no move is warned about and can be undone, the table never moves under the
pointer, input made during a slow round trip is queued and never lost, the shortcut sheet."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.e2e.conftest import Server
from tests.e2e.helpers import HeldAnswers, game_json, legal, open_deal, version, wait_version

pytestmark = pytest.mark.e2e

SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1280, "height": 800},
    "phone": {"width": 390, "height": 844},
}


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, browser: Browser, server: Server) -> Iterator[Page]:
    phone = request.param == "phone"
    ctx = browser.new_context(
        base_url=server.url, viewport=SIZES[request.param], has_touch=phone, is_mobile=phone
    )
    ctx.set_default_timeout(30_000)  # the machine is shared: be patient, not flaky
    errors: list[str] = []
    page = ctx.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    ctx.close()
    assert not errors, f"script errors in the page: {errors}"


def press(page: Page, selector: str) -> None:
    """Click on a desktop, tap on a phone: the way the page's player would."""
    target = page.locator(selector)
    if page.viewport_size and page.viewport_size["width"] < 600:
        # A pile off the side of a phone's sideways-scrolling table is scrolled to first.
        target.evaluate("e => e.scrollIntoView({block: 'nearest', inline: 'nearest'})")
        box = None
        for _ in range(20):  # the pile may be in the middle of being swapped for its new self
            target.wait_for(state="visible")
            box = target.bounding_box()
            if box is not None:
                break
        assert box is not None
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + min(10, box["height"] / 2))
    else:
        target.click(position={"x": 10, "y": 6})


def double(page: Page, selector: str) -> None:
    target = page.locator(selector)
    box = target.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + min(10, box["height"] / 2)
    if page.viewport_size and page.viewport_size["width"] < 600:
        page.touchscreen.tap(x, y)
        page.touchscreen.tap(x, y)
    else:
        page.mouse.dblclick(x, y)


# -- no moves left ------------------------------------------------------------------------------


def test_the_castles_end_trap_is_warned_about_and_can_be_undone(sized: Page) -> None:
    page = sized
    game_id = open_deal(page, "castles-end", 1)
    # Deal 1: 7♦ on t1 as the base leaves no legal move. A double-click on it asks first.
    double(page, "#pile-t1 > li:last-child")
    dialog = page.locator("#trap-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("no legal move is left")
    dialog.get_by_role("button", name="Choose another card").click()
    expect(dialog).to_be_hidden()
    assert version(page) == 0 and game_json(page, game_id)["moves"] == 0
    # Asked again, the player goes ahead: the game is not lost, Undo is offered.
    double(page, "#pile-t1 > li:last-child")
    dialog.get_by_role("button", name="Play it anyway").click()
    wait_version(page, 1)
    stuck = page.locator("#game-status .stuck")
    expect(stuck.get_by_role("heading")).to_have_text("No legal move is left")
    state = game_json(page, game_id)
    assert state["status"] == "playing" and state["legal_moves"] == [] and state["can_undo"]
    page.screenshot(path=_shot(page, "castles-end-no-move-left"), animations="disabled")
    stuck.get_by_role("button", name="Undo").click()
    wait_version(page, 2)
    expect(stuck).to_have_count(0)
    state = game_json(page, game_id)
    assert state["status"] == "playing" and state["base_rank"] is None
    assert "t2-f1" in legal(page)


def test_ending_a_game_with_no_move_left(sized: Page) -> None:
    page = sized
    game_id = open_deal(page, "castles-end", 1)
    double(page, "#pile-t1 > li:last-child")
    page.locator("#trap-dialog").get_by_role("button", name="Play it anyway").click()
    wait_version(page, 1)
    page.locator("#game-status .stuck").get_by_role("button", name="End the game").click()
    wait_version(page, 2)
    expect(page.locator(".summary h2")).to_have_text("Game over")
    assert game_json(page, game_id)["status"] == "lost"


def _shot(page: Page, name: str) -> str:
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or {"width": 0, "height": 0}
    return str(SCREENSHOTS / f"{name}-{size['width']}x{size['height']}.png")


# -- a table that stands still ------------------------------------------------------------------

WATCH = """() => {
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const nodes = (e.sources || []).map((s) => s.node).filter(Boolean);
      if (nodes.some((n) => n.closest && n.closest('#table, .board-wrap')) || nodes.length === 0)
        window.__shifts.push(e.value);
    }
  }).observe({type: 'layout-shift', buffered: false});
}"""

# Where the table is on the page, and each pile on the table. (A phone's big table scrolls
# sideways inside its frame when the player swipes: that is not the table moving.)
WHERE = """() => {
  const table = document.getElementById('table');
  const wrap = table.parentElement.getBoundingClientRect();
  const t = table.getBoundingClientRect();
  const at = {table: [Math.round(wrap.left + scrollX), Math.round(t.top + scrollY)]};
  for (const el of table.querySelectorAll('.pile')) {
    const r = el.getBoundingClientRect();
    at[el.id] = [Math.round(r.left - t.left), Math.round(r.top - t.top)];
  }
  return at;
}"""


def _positions(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(WHERE)
    return result


PLANS = {
    # picks and put-backs, moves, a refused move, a deal, an undo: messages of every length
    # come and go, and panels of the status change.
    "castles-end": (77, ["pick:t1", "cancel:t1", "move:t2-f1", "move:t3-t8", "bad:t4-t6", "undo"]),
    "quadrangle": (1, ["move:t5-t9", "deal", "move:t9-t10", "bad:t1-t2", "pick:t3", "undo"]),
}


@pytest.mark.parametrize("slug", list(PLANS))
def test_the_table_never_moves_during_play(sized: Page, slug: str) -> None:
    page = sized
    deal, plan = PLANS[slug]
    page.clock.install()  # the page's clock, moved by the test (a double-click is in time)
    open_deal(page, slug, deal)
    page.evaluate(WATCH)
    at_start = _positions(page)
    for step in plan:
        v = version(page)
        kind, _, arg = step.partition(":")
        source, _, target = arg.partition("-")
        if kind == "pick":
            press(page, f"#pile-{arg} > li:last-child")
            expect(page.locator("#announce")).to_contain_text("Picked up")
        elif kind == "cancel":
            page.clock.fast_forward(600)  # a second, separate click: not a double-click
            press(page, f"#pile-{arg} > li:last-child")
            expect(page.locator("#announce")).to_contain_text("Put back")
        elif kind in ("move", "bad"):
            press(page, f"#pile-{source} > li:last-child")
            assert _positions(page) == at_start, f"the table moved on picking for {step}"
            press(page, f"#pile-{target}")
            if kind == "move":
                wait_version(page, v + 1)
            else:
                expect(page.locator("#announce .error")).to_be_visible()
                wait_version(page, v)
        elif kind == "deal":
            press(page, "#pile-stock")
            wait_version(page, v + 1)
        elif kind == "undo":
            page.get_by_role("button", name="Undo").first.click()
            wait_version(page, v + 1)
        assert _positions(page) == at_start, f"the table moved after {step}"
    shifts = page.evaluate("() => window.__shifts")
    assert sum(shifts) == 0, f"layout shifts of the table: {shifts}"


# -- input is never lost -------------------------------------------------------------------------


def _slow(page: Page, latency_ms: int = 150) -> None:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1},
    )


def test_six_quick_clicks_at_150_ms_latency_are_six_actions(sized: Page) -> None:
    page = sized
    game_id = open_deal(page, "patriarchs", 1)
    _slow(page)
    for _ in range(6):  # as fast as a player clicks: none waits for an answer
        press(page, "#pile-stock")
    wait_version(page, 6)
    state = game_json(page, game_id)
    assert state["moves"] == 6 and len(state["piles"]["waste"]["cards"]) == 6
    assert state["piles"]["stock"]["count"] == 87 - 6


def test_a_card_picked_during_a_round_trip_shows_at_once_and_moves_after(sized: Page) -> None:
    page = sized
    game_id = open_deal(page, "castles-end", 77)
    first = legal(page)
    assert "t2-f1" in first
    answers = HeldAnswers(page)
    press(page, "#pile-t2 > li:last-child")
    press(page, "#pile-f1")  # sent; the answer is held until the test lets it go
    press(page, "#pile-t1 > li:last-child")  # picked while waiting: shown at once
    expect(page.locator("#pile-t1 > li.picked")).to_have_count(1)
    assert version(page) == 0
    answers.release()
    wait_version(page, 1)
    expect(page.locator("#pile-t1 > li.picked")).to_have_count(1)  # still picked after the swap
    assert game_json(page, game_id)["moves"] == 1


def test_a_refused_queued_action_says_why_and_drops_the_rest(sized: Page) -> None:
    page = sized
    game_id = open_deal(page, "castles-end", 77)
    answers = HeldAnswers(page)  # everything below is queued behind the first move
    press(page, "#pile-t2 > li:last-child")
    press(page, "#pile-f1")  # legal: sets the base
    press(page, "#pile-t3 > li:last-child")
    press(page, "#pile-t3")  # not a move at all: put back (client side)
    press(page, "#pile-t4 > li:last-child")
    press(page, "#pile-t6")  # queued; refused by the server once it is its turn
    page.keyboard.press("u")  # an undo queued after the refusal: dropped
    answers.release()
    expect(page.locator("#announce .error")).to_contain_text("cannot go on")
    expect(page.locator("#announce .error")).to_contain_text("not sent")
    page.wait_for_function("() => !document.querySelector('#table.busy')")
    state = game_json(page, game_id)
    assert state["version"] == 1 and state["undos"] == 0
    assert int(page.get_attribute("#game-status", "data-version") or -1) == 1


# -- the keyboard --------------------------------------------------------------------------------


def test_the_shortcut_sheet_and_keys_after_a_preference(page: Page) -> None:
    open_deal(page, "patriarchs", 1)
    page.keyboard.press("?")
    sheet = page.locator("#keys-dialog")
    expect(sheet).to_be_visible()
    expect(sheet).to_contain_text("undo")
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    # Ticking a preference leaves the focus on its checkbox: the shortcuts still work.
    page.locator("details.prefs summary").click()
    page.get_by_label("Four-colour deck").check()
    page.keyboard.press("d")
    wait_version(page, 1)
    page.keyboard.press("u")  # a deal turned up a card: the undo key answers that it cannot
    # ... and says why (issue 23): the greyed button gives the same reason as its title.
    expect(page.locator("#announce")).to_contain_text("turned up a card you had not seen")
    expect(page.get_by_role("button", name="Undo").first).to_have_attribute(
        "title", re.compile("cannot be unseen")
    )


# -- replays that play ---------------------------------------------------------------------------


def test_a_replay_plays_by_itself_without_reloading(sized: Page) -> None:
    page = sized
    game_id = open_deal(page, "castles-end", 77)
    for text in ("t2-f1", "t3-t8", "t4-t9", "t6-t7"):
        v = version(page)
        press(page, f"#pile-{text.split('-')[0]} > li:last-child")
        press(page, f"#pile-{text.split('-')[1]}")
        wait_version(page, v + 1)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Resign").click()
    expect(page.locator("#game-status")).to_have_class(re.compile(r"\blost\b"))
    page.goto(f"/games/{game_id}/replay")
    now = page.locator("#replay-now")
    expect(now).to_have_attribute("data-step", "0")
    log = page.locator("#move-log > li")
    expect(log.first).to_have_text("3♦ to the ♦ foundation")
    page.evaluate("() => { window.__same_page = true; }")
    page.get_by_label("Speed").select_option("fast")
    page.get_by_role("button", name="▶ Play").click()
    expect(now).to_have_attribute("data-step", "4", timeout=30_000)
    expect(page.get_by_role("button", name="▶ Play")).to_be_visible()  # stopped at the end
    expect(log.nth(3)).to_have_attribute("aria-current", "step")
    assert page.url.endswith("step=4")
    assert page.evaluate("() => window.__same_page === true")
    page.screenshot(path=_shot(page, "replay"), animations="disabled")


# -- auto-finish ---------------------------------------------------------------------------------


def test_auto_finish_when_every_card_can_go_up(sized: Page, server: Server) -> None:
    from app.engine.cards import RANKS
    from tests.e2e.test_flows import _set_state
    from tests.engine.builders import position

    page = sized
    done = {f"f{i + 1}": " ".join(f"{r}{s}" for r in RANKS) for i, s in enumerate("CDH")}
    spades = " ".join(f"{r}S" for r in RANKS[:10])  # A … 10
    game_id = open_deal(page, "castles-end", 78)
    _set_state(server, game_id, position("castles-end", done, f4=spades, t1="JS", t2="KS", t3="QS"))
    page.reload()
    offer = page.locator(".finish-offer")
    expect(offer).to_contain_text("Every card left can go up.")
    offer.get_by_role("button", name="Finish").click()
    expect(page.locator(".summary h2")).to_have_text("You won!")
    expect(page.locator("#announce")).to_contain_text("Finished: 3 cards went up.")
    state = game_json(page, game_id)
    assert state["status"] == "won" and state["moves"] == 3


# -- watching ------------------------------------------------------------------------------------


def test_watching_a_game_in_play_follows_it(page: Page, browser: Browser, server: Server) -> None:
    game_id = open_deal(page, "castles-end", 80)
    watcher = browser.new_context(base_url=server.url)
    try:
        other = watcher.new_page()
        other.goto(f"/games/{game_id}")
        expect(other.locator("#game-status")).to_have_attribute("data-version", "0")
        page.locator("#pile-t2 > li").last.click()
        page.locator("#pile-f1").click()
        wait_version(page, 1)
        # No reload: the watcher's page asks for the board and shows the move within seconds.
        expect(other.locator("#game-status")).to_have_attribute("data-version", "1", timeout=30_000)
        assert other.locator("#pile-f1 > li").count() == 1
    finally:
        watcher.close()


# -- phones: the two big tables ----------------------------------------------------------------


@pytest.mark.parametrize("slug", ["quadrangle", "quadruple-interchange"])
def test_big_tables_on_a_phone_keep_cards_a_finger_can_hit(
    browser: Browser, server: Server, slug: str
) -> None:
    phone = browser.new_context(
        base_url=server.url, viewport=SIZES["phone"], has_touch=True, is_mobile=True
    )
    try:
        page = phone.new_page()
        game_id = open_deal(page, slug, 1)
        widths = page.eval_on_selector_all("#table .pile", "els => els.map(e => e.offsetWidth)")
        assert min(widths) >= 40, widths  # the issue measured 28–31 px
        wrap = page.locator(".board-wrap")
        assert wrap.evaluate("e => e.scrollWidth > e.clientWidth")  # it scrolls sideways
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # the page not
        if slug == "quadrangle":
            wrap.evaluate("e => { e.scrollLeft = e.scrollWidth; }")  # to the right-hand piles
            press(page, "#pile-t5 > li:last-child")
            press(page, "#pile-t9")
            wait_version(page, 1)
            assert game_json(page, game_id)["piles"]["t9"]["cards"][-1] == "9S"
        page.screenshot(path=_shot(page, f"{slug}-phone"), animations="disabled")
    finally:
        phone.close()


# -- animation and sound -------------------------------------------------------------------------


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_only_the_moved_cards_slide_and_reduced_motion_is_respected(
    browser: Browser, server: Server, motion: str
) -> None:
    ctx = browser.new_context(base_url=server.url, reduced_motion=motion)  # type: ignore[arg-type]
    try:
        page = ctx.new_page()
        open_deal(page, "castles-end", 80)
        page.evaluate("""() => { window.__slid = []; const animate = Element.prototype.animate;
            Element.prototype.animate = function (...a) {
              window.__slid.push(this.closest('.pile').id); return animate.apply(this, a); }; }""")
        page.locator("#pile-t2 > li").last.click()
        page.locator("#pile-f1").click()
        wait_version(page, 1)
        slid = page.evaluate("() => window.__slid")
        assert slid == ([] if motion == "reduce" else ["pile-f1"])
    finally:
        ctx.close()


def test_sounds_are_off_until_chosen(page: Page) -> None:
    open_deal(page, "patriarchs", 1)
    assert "pref-sound" not in (page.get_attribute("body", "class") or "")
    page.evaluate("""() => { window.__tones = 0; const O = window.AudioContext;
        window.AudioContext = class extends O { createOscillator() { window.__tones++;
          return super.createOscillator(); } }; }""")
    page.keyboard.press("d")
    wait_version(page, 1)
    assert page.evaluate("() => window.__tones") == 0
    page.locator("details.prefs summary").click()
    page.get_by_label("Sounds").check()
    # The server saves the choice and says which classes the page wears (no reload).
    expect(page.locator("body")).to_have_class(re.compile(r"\bpref-sound\b"))
    page.keyboard.press("d")
    wait_version(page, 2)
    assert page.evaluate("() => window.__tones") == 1
