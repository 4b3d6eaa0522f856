"""In Chromium: a page on another origin cannot sign a player in or out, and every page works
under the content security policy (the ``page`` fixture fails a test on any CSP violation)."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.e2e.conftest import Server, csp_problems
from tests.e2e.helpers import legal, open_deal

pytestmark = pytest.mark.e2e

ATTACKER = "http://attacker.test"  # served by the browser itself (a route), another site
PASSWORD = "correct horse battery staple"


def _account_heading(page: Page) -> str:
    page.goto("/account")
    return page.locator("h1").inner_text()


def _named_player_with_password(page: Page) -> str:
    """Makes this browser's player a named one with a password; returns the name."""
    name = f"E2e_{uuid.uuid4().hex[:10]}"
    page.goto("/account")
    page.locator("form[action='/account/name'] input[name=name]").fill(name)
    page.locator("form[action='/account/name'] button").click()
    page.wait_for_url("**/account")
    page.locator("form[action='/account/password'] input[name=password]").fill(PASSWORD)
    page.locator("form[action='/account/password'] button").click()
    page.wait_for_url("**/account")
    return name


def _attacker_page(context: BrowserContext, server: Server, action: str, fields: str) -> None:
    """The attacker's site: a form that posts itself to our server as soon as it loads."""
    html = (
        "<!doctype html><title>Win a prize</title><body>"
        f"<form id=f method=post action='{server.url}{action}'>{fields}</form>"
        "<script>document.getElementById('f').submit()</script></body>"
    )
    context.route(
        f"{ATTACKER}/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=html),
    )


def test_another_site_cannot_sign_a_visitor_in(browser: Browser, server: Server) -> None:
    attacker = browser.new_context(base_url=server.url)
    victim = browser.new_context(base_url=server.url)
    attacker_page = attacker.new_page()
    name = _named_player_with_password(attacker_page)
    victim_page = victim.new_page()
    game_id = open_deal(victim_page, "corners", 5)
    before = _account_heading(victim_page)
    assert before.startswith("You are ")
    fields = (
        f"<input name=name value='{name}'><input name=password value='{PASSWORD}'>"
        "<input name=csrftoken value='guessed'>"
    )
    _attacker_page(victim, server, "/signin", fields)
    with victim_page.expect_response(f"{server.url}/signin") as answer:
        victim_page.goto(f"{ATTACKER}/prize")
    assert answer.value.status == 403
    assert _account_heading(victim_page) == before  # still the victim's own player
    victim_page.goto(f"/games/{game_id}")
    assert victim_page.locator("#move-form").count() == 1  # and still playing their game
    attacker.close()
    victim.close()


def test_another_site_cannot_sign_a_player_out(context: BrowserContext, server: Server) -> None:
    page = context.new_page()
    name = _named_player_with_password(page)
    _attacker_page(context, server, "/signout", "")
    with page.expect_response(f"{server.url}/signout") as answer:
        page.goto(f"{ATTACKER}/prize")
    assert answer.value.status == 403
    assert _account_heading(page) == f"You are {name}"


def test_the_sign_out_button_works_on_our_own_page(context: BrowserContext) -> None:
    page = context.new_page()
    _named_player_with_password(page)
    page.goto("/account")
    page.get_by_role("button", name="Sign out everywhere").click()
    page.wait_for_url(re.compile(r"/$"))
    assert _account_heading(page) == "Your account"


def test_every_page_works_under_the_csp(page: Page, server: Server) -> None:
    """Each page loads, its scripts run (htmx and the board's), and nothing is blocked."""
    page.goto("/")
    assert page.evaluate("typeof window.htmx") == "object"
    for url in ("/account", "/my-games", "/leaderboard", "/rules/corners", "/deal/corners/7"):
        page.goto(url)
        assert page.locator("h1").count() >= 1, url
    game_id = open_deal(page, "castles-end", 3)
    status = page.locator("#game-status")
    version = status.get_attribute("data-version")
    moves = legal(page)
    assert moves, "the board offers moves"
    # An HTMX move through the board form (scripts and htmx headers under the CSP).
    source, _, target = moves[0].partition("/")[0].partition("-")
    page.locator("#move-form select[name=from]").select_option(source)
    page.locator("#move-form select[name=to]").select_option(target)
    page.locator("#move-form button[type=submit]").click()
    page.wait_for_function(
        "v => document.getElementById('game-status').dataset.version !== v", arg=version
    )
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator("#resign-form button").click()
    page.wait_for_selector("#game-status.lost")
    page.goto(f"/games/{game_id}/replay")
    assert page.locator("h1").count() >= 1
    page.goto("/my-games")
    assert game_id in page.content()
    page.goto("/account")
    heading = page.locator("h1").inner_text()
    page.goto(f"/players/{heading.removeprefix('You are ')}")
    assert page.locator("h1").count() >= 1
    page.goto("/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)
    page.goto("/redoc")
    page.wait_for_selector("redoc [data-section-id], redoc h1", timeout=20_000)


def test_a_csp_violation_would_fail_the_test(context: BrowserContext) -> None:
    """The check itself: inline script is blocked on our pages, and the violation reaches the
    console, where the ``page`` fixture would fail a test on it."""
    seen: list[str] = []
    page = context.new_page()
    page.on("console", lambda msg: seen.append(msg.text))
    page.goto("/")
    # Waits for the violation's console message (not for a length of time).
    with page.expect_console_message(lambda msg: bool(csp_problems([msg.text]))):
        page.evaluate(
            "() => { const s = document.createElement('script');"
            " s.textContent = 'window.injected = 1'; document.body.appendChild(s); }"
        )
    assert page.evaluate("window.injected") is None
    assert csp_problems(seen)
