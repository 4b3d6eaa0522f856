"""A café's second newcomer, past a free limit of one new player an hour for the address: the
page does its moment of work by itself (static/js/newcomer.js) and the first action plays
(issue 23; app/web/http/newcomers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.conftest import Server, serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cafe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(
        tmp_path_factory.mktemp("cafe"), RATE_LIMIT_NEW_PLAYERS="1/hour", NEWCOMER_PROOF_BITS="12"
    ) as running:
        yield running


def _new_rated_game(page: Page) -> None:
    page.locator(".game-card", has_text="Corners").get_by_role(
        "button", name="New rated game"
    ).click()
    page.wait_for_selector("#game-status")


def test_the_second_newcomer_of_a_cafe_plays(browser: Browser, cafe: Server) -> None:
    first, second = (browser.new_context(base_url=cafe.url) for _ in range(2))
    try:
        a = first.new_page()
        a.goto("/")
        assert a.locator('script[src="/static/js/newcomer.js"]').count() == 0
        _new_rated_game(a)
        b = second.new_page()
        with b.expect_response("**/newcomer") as proved:
            b.goto("/")
        assert proved.value.status == 204
        _new_rated_game(b)
        assert "/games/" in b.url
    finally:
        first.close()
        second.close()
