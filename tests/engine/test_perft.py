"""Perft: counts of legal move sequences from fixed positions, against tests/fixtures/perft.

Any change in what ``legal_moves`` offers, or in what ``apply`` does with a move, changes some
count. If the change is deliberate (a rules change), regenerate the fixtures with
``.venv/bin/python -m tests.fixtures.make_perft`` and explain the changed counts in the commit;
``divide()`` in that module splits a count by first move to find where it changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.engine import DEVELOPMENT_KEY, GAMES, RULES_VERSION, Move, dumps, get_ruleset
from tests.fixtures.make_perft import perft

PERFT = Path(__file__).parents[1] / "fixtures" / "perft"


def load(slug: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((PERFT / f"{slug}.json").read_text(encoding="utf-8"))
    return document


def case_id(slug: str, position: dict[str, Any]) -> str:
    """``corners-1`` for a deal as dealt, ``corners-1+40`` for 40 moves into it."""
    plies = len(position["moves"].split())
    return f"{slug}-{position['deal']}" + (f"+{plies}" if plies else "")


CASES = [
    pytest.param(slug, position, id=case_id(slug, position))
    for slug in sorted(GAMES)
    for position in load(slug)["positions"]
]


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_every_game_has_perft_to_depth_3_for_3_deals(slug: str) -> None:
    document = load(slug)
    assert document["game"] == slug
    assert document["rules_version"] == RULES_VERSION
    assert document["key"] == DEVELOPMENT_KEY.decode()
    dealt = [p for p in document["positions"] if not p["moves"] and len(p["perft"]) >= 3]
    assert len({p["deal"] for p in dealt}) >= 3
    assert 1 in {p["deal"] for p in dealt}


@pytest.mark.parametrize(("slug", "position"), CASES)
def test_perft_matches_the_fixture(slug: str, position: dict[str, Any]) -> None:
    rules = get_ruleset(slug)
    line = [Move.parse(text) for text in position["moves"].split()]
    state = rules.replay(rules.deal(position["deal"]), line)
    assert dumps(state) == position["state"], "the position itself changed: see test_golden"
    assert perft(rules, state, len(position["perft"])) == position["perft"]
