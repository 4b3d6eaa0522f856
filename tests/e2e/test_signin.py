"""In Chromium: while a name is under attack, its owner signs in from a new address as usual;
the page does the proof of work itself (static/js/signin.js, the default difficulty), under
the content security policy. Addresses are told to the server as a proxy would
(``X-Forwarded-For`` from 127.0.0.1, which uvicorn trusts by default)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright, expect

from tests.e2e.conftest import REPORT_CSP, Server, csp_problems
from tests.e2e.test_security import PASSWORD, _named_player_with_password

pytestmark = pytest.mark.e2e


def _from(browser: Browser, server: Server, address: str) -> BrowserContext:
    ctx = browser.new_context(base_url=server.url, extra_http_headers={"X-Forwarded-For": address})
    ctx.set_default_timeout(30_000)
    ctx.add_init_script(REPORT_CSP)
    return ctx


@pytest.fixture()
def contexts() -> Iterator[list[BrowserContext]]:
    made: list[BrowserContext] = []
    yield made
    for ctx in made:
        ctx.close()


def _guess(playwright: Playwright, server: Server, name: str, times: int) -> list[int]:
    """Wrong passwords from another address, as a script would send them."""
    guesser = playwright.request.new_context(
        base_url=server.url, extra_http_headers={"X-Forwarded-For": "203.0.113.250"}
    )
    try:
        page = guesser.get("/account").text()
        found = re.search(r'name="csrftoken" value="([^"]+)"', page)
        assert found
        statuses = []
        for i in range(times):
            answer = guesser.post(
                "/signin",
                form={"name": name, "password": f"guess {i}", "csrftoken": found[1]},
                headers={"Origin": server.url},
                max_redirects=0,
            )
            statuses.append(answer.status)
        return statuses
    finally:
        guesser.dispose()


def test_the_owner_signs_in_from_a_new_address_while_the_name_is_under_attack(
    browser: Browser, playwright: Playwright, server: Server, contexts: list[BrowserContext]
) -> None:
    home = _from(browser, server, "192.0.2.250")
    contexts.append(home)
    name = _named_player_with_password(home.new_page())
    # Ten wrong passwords (the default limit) from elsewhere; the next one must bring a proof.
    assert _guess(playwright, server, name, 11) == [401] * 10 + [403]

    phone = _from(browser, server, "198.51.100.250")
    contexts.append(phone)
    page = phone.new_page()
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    page.goto("/account")
    form = page.locator("form[data-signin]")
    form.locator("input[name=name]").fill(name)
    form.locator("input[name=password]").fill(PASSWORD)
    # The page asks whether this name needs a proof once the name is typed (a person types the
    # password meanwhile); a click before that answer sends the form without one.
    expect(form.locator(".signin-work")).not_to_be_empty()
    started = time.monotonic()
    form.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text(f"You are {name}")
    took = time.monotonic() - started
    expect(page.locator(".flash")).to_contain_text(f"Signed in as {name}")
    assert not csp_problems(console), csp_problems(console)
    print(f"signed in with a proof of work in {took:.2f} s")

    # Without JavaScript, from yet another address: refused, with what to do instead.
    plain = browser.new_context(
        base_url=server.url,
        java_script_enabled=False,
        extra_http_headers={"X-Forwarded-For": "198.51.100.251"},
    )
    contexts.append(plain)
    page = plain.new_page()
    page.goto("/account")
    form = page.locator("form[data-signin]")
    form.locator("input[name=name]").fill(name)
    form.locator("input[name=password]").fill(PASSWORD)
    form.get_by_role("button", name="Sign in").click()
    expect(page.locator("p.error")).to_contain_text("signed in on before")
    expect(page.locator("h1")).not_to_have_text(f"You are {name}")
