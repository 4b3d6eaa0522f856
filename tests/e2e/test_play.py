"""Playing in a real browser: every way of moving, in every game, swaps exactly the piles that
changed and nothing else; illegal moves explain themselves; undo works."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from app.engine import DEVELOPMENT_KEY, Move, get_ruleset
from tests.e2e.helpers import (
    assert_board_matches,
    changed_between,
    click_move,
    drag_move,
    game_json,
    keyboard_move,
    legal,
    mark_piles,
    open_deal,
    replaced_piles,
    status_replaced,
    version,
    wait_version,
)

pytestmark = pytest.mark.e2e

MOVERS: dict[str, Callable[[Page, Move], None]] = {
    "click": click_move,
    "drag": drag_move,
    "keyboard": keyboard_move,
}

# Per game: a deal and a few moves on it, each made one way. Found with the engine: every move
# is legal in turn, and the last one can be taken back (it turns up no hidden card). The
# Quadruple Interchange drag takes a two-card run by its lower card.
PLANS: dict[str, tuple[int, list[tuple[str, str]]]] = {
    "quadrangle": (1, [("click", "t5-t9"), ("drag", "t9-t10"), ("keyboard", "t8-t9")]),
    "quadruple-interchange": (
        16,
        [("click", "t1-t4"), ("drag", "t4-t1/2"), ("keyboard", "t1-t4")],
    ),
    "corners": (
        20,
        [("keyboard", "stock-waste"), ("click", "r1-f2"), ("drag", "waste-f3")],
    ),
    "castles-end": (1, [("click", "t2-f1"), ("drag", "t1-t5"), ("keyboard", "t4-f2")]),
    "patriarchs": (
        1,
        [
            ("click", "stock-waste"),
            ("keyboard", "stock-waste"),
            ("keyboard", "r3-f8"),
            ("drag", "r3-f8"),
        ],
    ),
}


def test_the_plans_are_legal() -> None:
    for slug, (deal, plan) in PLANS.items():
        rules = get_ruleset(slug)
        state = rules.deal(deal, DEVELOPMENT_KEY)
        for _, text in plan:
            assert Move.parse(text) in rules.legal_moves(state), (slug, text)
            step = rules.step(state, Move.parse(text))
            state = step.after
        assert not step.revealed, f"{slug}: the last move must be one undo can take back"


@pytest.mark.parametrize("slug", list(PLANS))
def test_every_way_of_moving_swaps_only_the_changed_piles(page: Page, slug: str) -> None:
    deal, plan = PLANS[slug]
    game_id = open_deal(page, slug, deal)
    state = game_json(page, game_id)
    assert_board_matches(page, state)
    for method, text in plan:
        move = Move.parse(text)
        assert text in legal(page)
        before, v = state, version(page)
        mark_piles(page)
        MOVERS[method](page, move)
        wait_version(page, v + 1)
        state = game_json(page, game_id)
        assert state["version"] == v + 1
        changed = changed_between(before, state)
        assert {move.source, move.target} <= changed
        # Only the piles that changed are new elements; every other pile is the same DOM node.
        assert replaced_piles(page) == changed, f"{method} {text}"
        assert status_replaced(page)
        assert_board_matches(page, state)
        expect(page.locator("#announce")).not_to_contain_text("cannot")

    # Undo takes the last move back, again swapping only what changes.
    before, v = state, version(page)
    mark_piles(page)
    page.get_by_role("button", name="Undo").click()
    wait_version(page, v + 1)
    state = game_json(page, game_id)
    assert state["undos"] == 1 and state["moves"] == len(plan)
    assert replaced_piles(page) == changed_between(before, state)
    assert_board_matches(page, state)
    expect(page.locator("#announce")).to_contain_text("Took back")
