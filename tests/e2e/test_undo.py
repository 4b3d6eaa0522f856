"""A double click on Undo takes back one move, not two (issue 21), in a real Chromium: with
the answer back before the second click, and with the first undo still on its way."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from app.engine import Move
from tests.e2e.helpers import click_move, game_json, open_deal, version, wait_version

pytestmark = pytest.mark.e2e


def _latency(page: Page, ms: int) -> None:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": ms, "downloadThroughput": -1, "uploadThroughput": -1},
    )


@pytest.mark.parametrize("latency_ms", [0, 300], ids=["quick", "slow"])
def test_a_double_click_on_undo_takes_back_one_move(page: Page, latency_ms: int) -> None:
    game_id = open_deal(page, "quadrangle", 1)
    for n, notation in enumerate(["t5-t9", "t8-t10"], start=1):  # two moves undo can take back
        click_move(page, Move.parse(notation))
        wait_version(page, n)
    assert game_json(page, game_id)["can_undo"]
    _latency(page, latency_ms)
    page.locator("#undo-form button").dblclick()
    # Version 3 with nothing in flight or queued: a second undo would still be on its way.
    wait_version(page, 3)
    state = game_json(page, game_id)
    assert (state["version"], state["moves"], state["undos"]) == (3, 2, 1)
    assert version(page) == 3
    # A single click after that is an undo of its own.
    page.locator("#undo-form button").click()
    wait_version(page, 4)
    assert game_json(page, game_id)["undos"] == 2
