"""Driving the board the way a player does, and reading it back."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, Route
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.engine import Move
from app.engine.cards import RANKS, SUITS, name_of, parse_code

CODE_BY_NAME = {name_of(parse_code(r + s)): r + s for r in RANKS for s in SUITS}


# The longest any step of a walk waits for the page to get where it is going. Every wait is on
# a condition, so this costs a passing test nothing; on a machine whose cores other processes
# hold, the server, Chromium and axe share what is left, and one step of a long walk (a
# deal's page, its form's POST, the new board) took longer than 30 s.
PATIENCE_MS = 90_000


def open_deal(page: Page, slug: str, deal: int) -> str:
    """Open the deal's shared page, press *Play this deal*; returns the new game's id."""
    play = page.get_by_role("button", name="Play this deal")
    for attempt in (1, 2):
        answer = page.goto(f"/deal/{slug}/{deal}", timeout=PATIENCE_MS)
        try:
            play.wait_for(timeout=PATIENCE_MS // 2)
            break
        except PlaywrightTimeout:
            # A loaded machine's server may shed the page (a 503 or 429 a person would reload);
            # once more, then say what the page was.
            if attempt == 2:
                status = None if answer is None else answer.status
                text = page.locator("body").inner_text()[:600]
                raise AssertionError(f"no 'Play this deal' (HTTP {status}): {text}") from None
    play.click(timeout=PATIENCE_MS)
    page.wait_for_url(re.compile(r"/games/[A-Za-z0-9_-]+$"), timeout=PATIENCE_MS)
    page.wait_for_selector("#game-status", timeout=PATIENCE_MS)
    return page.url.rsplit("/", 1)[1]


def game_json(page: Page, game_id: str) -> dict[str, Any]:
    answer = page.request.get(f"/api/games/{game_id}")
    assert answer.ok, answer.text()
    data: dict[str, Any] = answer.json()
    return data


def version(page: Page) -> int:
    return int(page.get_attribute("#game-status", "data-version") or -1)


def legal(page: Page) -> list[str]:
    """The legal moves the status sends the board's script, in the engine's notation."""
    data = json.loads(page.get_attribute("#game-status", "data-moves") or "[]")
    return [str(Move(source, target, count)) for source, target, count, *_ in data]


def wait_version(page: Page, expected: int) -> None:
    """Until the board shows ``expected`` and has landed: no action in flight and no card still
    sliding (a sliding card's box is somewhere between two piles, and a drag aimed at it, as
    on a slow machine, would drop on the wrong pile)."""
    try:
        page.wait_for_function(
            "v => document.getElementById('game-status').dataset.version === String(v)"
            " && !document.querySelector('#table.busy, #table .flying')",
            arg=expected,
        )
    except PlaywrightTimeout:
        # What the board was doing, for a failure on a machine where it cannot be watched.
        seen = page.evaluate(
            """() => ({version: document.getElementById('game-status')?.dataset.version,
                busy: !!document.querySelector('#table.busy'),
                queued: document.getElementById('table')?.dataset.queued,
                flying: document.querySelectorAll('#table .flying').length,
                picked: [...document.querySelectorAll('#table .picked')].map(e => e.id),
                said: document.getElementById('announce')?.textContent.trim()})"""
        )
        raise AssertionError(f"the board never showed version {expected}: {seen}") from None


def board(page: Page) -> dict[str, dict[str, Any]]:
    """Each pile as the page shows it: its count and its cards (None for a back)."""
    raw = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('#table .pile')].map(el => [
            el.id.slice(5),
            {count: Number(el.dataset.count), fanned: el.classList.contains('fanned'),
             cards: [...el.children].map(li => li.getAttribute('aria-label'))}]))"""
    )
    out = {}
    for pid, pile in raw.items():
        cards = [None if n == "face-down card" else CODE_BY_NAME[n] for n in pile["cards"]]
        out[pid] = {"count": pile["count"], "fanned": pile["fanned"], "cards": cards}
    return out


def assert_board_matches(page: Page, state: dict[str, Any]) -> None:
    """The page shows exactly the game's public view (top cards only for squared piles)."""
    shown = board(page)
    assert shown.keys() == state["piles"].keys()
    for pid, pile in state["piles"].items():
        if pid == "stock" and state["status"] == "playing":
            assert shown[pid]["count"] == pile["count"]
            assert shown[pid]["cards"] == ([None] if pile["count"] else [])
            continue
        cards = pile["cards"]
        assert shown[pid]["count"] == len(cards), pid
        expected = cards if shown[pid]["fanned"] else cards[-1:]
        assert shown[pid]["cards"] == expected, pid


def mark_piles(page: Page) -> None:
    page.evaluate(
        "() => { for (const el of document.querySelectorAll('#table .pile, #game-status'))"
        " el.__kept = true; }"
    )


def replaced_piles(page: Page) -> set[str]:
    """Pile ids whose element was swapped for a new one since ``mark_piles``."""
    ids = page.evaluate(
        "() => [...document.querySelectorAll('#table .pile')]"
        ".filter(el => !el.__kept).map(el => el.id.slice(5))"
    )
    return set(ids)


def status_replaced(page: Page) -> bool:
    return bool(page.evaluate("() => !document.getElementById('game-status').__kept"))


def changed_between(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {p for p in before["piles"] if before["piles"][p] != after["piles"][p]}


# -- the ways of moving --------------------------------------------------------------------


def _source_card(page: Page, move: Move) -> Any:
    cards = page.locator(f"#pile-{move.source} > li")
    n = cards.count()
    assert n >= move.count, f"{move.source} shows {n} cards"
    return cards.nth(n - move.count)


def _target(page: Page, pile: str) -> Any:
    cards = page.locator(f"#pile-{pile} > li")
    n = cards.count()
    return cards.nth(n - 1) if n else page.locator(f"#pile-{pile}")


def _grip(box: dict[str, float]) -> tuple[float, float]:
    """A point on the visible top strip of a card, where a player would take hold of it."""
    return box["x"] + box["width"] / 2, box["y"] + min(8.0, box["height"] / 4)


def click_move(page: Page, move: Move) -> None:
    if move.source == "stock":
        page.locator("#pile-stock").click()
        return
    card = _source_card(page, move)
    card.click(position={"x": 10, "y": 6})
    _target(page, move.target).click()


def drag_move(page: Page, move: Move) -> None:
    card = _source_card(page, move)
    card.scroll_into_view_if_needed()
    box = card.bounding_box()
    assert box is not None
    target = _target(page, move.target).bounding_box()
    assert target is not None
    x, y = _grip(box)
    page.mouse.move(x, y)
    page.mouse.down()
    tx, ty = target["x"] + target["width"] / 2, target["y"] + min(20.0, target["height"] / 2)
    page.mouse.move(tx, ty, steps=12)
    page.mouse.up()


def focus_pile(page: Page, pile: str) -> None:
    """Walk the focus to ``pile`` with the arrow keys, as a keyboard player does."""
    if not page.evaluate("() => !!document.activeElement?.classList.contains('pile')"):
        page.locator("#table .pile").first.focus()
    for _ in range(40):
        here = page.evaluate("() => document.activeElement.id.slice(5)")
        if here == pile:
            return
        a = page.locator(f"#pile-{here}").bounding_box()
        b = page.locator(f"#pile-{pile}").bounding_box()
        assert a is not None and b is not None
        dx, dy = b["x"] - a["x"], b["y"] - a["y"]
        if abs(dy) > 2:
            page.keyboard.press("ArrowDown" if dy > 0 else "ArrowUp")
        else:
            page.keyboard.press("ArrowRight" if dx > 0 else "ArrowLeft")
    raise AssertionError(f"the arrow keys never reached {pile}")


def keyboard_move(page: Page, move: Move) -> None:
    if move.source == "stock":
        page.keyboard.press("d")
        return
    focus_pile(page, move.source)
    for _ in range(move.count):
        page.keyboard.press("Enter")
    focus_pile(page, move.target)
    page.keyboard.press("Enter")


def people(
    browser: Browser,
    base_url: str,
    count: int,
    errors: list[str],
    timezone_id: str | None = None,
) -> tuple[list[BrowserContext], list[Page]]:
    """``count`` people, each in a browser of their own (a context: own cookies), with one
    page each (their clocks in ``timezone_id``, else the machine's); every script error on
    those pages goes into ``errors``."""
    contexts = [
        browser.new_context(
            base_url=base_url, viewport={"width": 1280, "height": 800}, timezone_id=timezone_id
        )
        for _ in range(count)
    ]
    pages = [c.new_page() for c in contexts]
    for p in pages:
        p.set_default_timeout(30_000)
        p.on("pageerror", lambda exc: errors.append(str(exc)))
    return contexts, pages


class HeldAnswers:
    """The page's POSTs held until the test lets them go: a round trip exactly as long as the
    test needs, whatever the machine's speed (no latency to guess, no race with it)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.held: list[Route] = []
        self.holding = True
        page.route("**/*", self._route)

    def _route(self, route: Route) -> None:
        if self.holding and route.request.method == "POST":
            self.held.append(route)
        else:
            route.continue_()

    def release(self) -> None:
        """Send what was held, and everything from now on."""
        self.holding = False
        for route in self.held:
            route.continue_()
        self.held.clear()
        self.page.unroute("**/*", self._route)
