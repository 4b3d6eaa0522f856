"""Golden layouts: deal algorithm v1 under the development key, pinned for ever.

(a) The layouts quoted in rules.md, copied by hand: the independent check of the algorithm.
(b) tests/fixtures/golden/<slug>.json (written by tests/fixtures/make_golden.py): every deal
    in them dealt afresh must match, pile by pile and in serialized form.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.engine import DEVELOPMENT_KEY, GAMES, dumps, get_ruleset, loads
from app.engine.deals import ALGORITHM
from tests.engine.builders import show

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"


def top_first(state_stock: list[str], n: int) -> list[str]:
    """The next ``n`` cards the stock will deal, next one first (rules.md's "stock top")."""
    return state_stock[::-1][:n]


# -- (a) rules.md, verbatim ----------------------------------------------------------------


def test_rules_md_quadrangle_deal_1() -> None:
    rules = get_ruleset("quadrangle")
    state = rules.deal(1)
    view = rules.full_view(state)
    assert view["t1"] == ["AC", "9C", "AD"]
    assert view["t2"] == ["TD", "5D", "5S"]
    assert view["t12"] == ["4H", "3C", "AS"]
    assert view["f1"] == ["2H"]
    assert rules.base_rank(state) == 2
    assert top_first(view["stock"], 5) == ["JH", "JS", "AH", "7D", "2H"]
    assert view["stock"][0] == "AS"  # the stock's bottom card
    assert view["waste"] == []


def test_rules_md_quadrangle_deal_1000000() -> None:
    rules = get_ruleset("quadrangle")
    view = rules.full_view(rules.deal(1_000_000))
    assert view["t1"] == ["4H", "5D", "KS"]
    assert view["f1"] == ["7C"]
    assert top_first(view["stock"], 5) == ["7H", "5D", "JS", "9D", "KC"]


def test_rules_md_quadruple_interchange_deal_1() -> None:
    rules = get_ruleset("quadruple-interchange")
    state = rules.deal(1)
    assert show(state, "t1") == "5C (AC) 6H (KH) 7S (QC) 8S (2D) JC (TD) TS"
    view = rules.full_view(state)
    assert top_first(view["stock"], 5) == ["2H", "9C", "JS", "KC", "AD"]
    assert view["stock"][0] == "4S"
    assert len(view["stock"]) == 87


def test_rules_md_corners_deal_1() -> None:
    rules = get_ruleset("corners")
    view = rules.full_view(rules.deal(1))
    assert [view[f"f{i}"] for i in range(1, 5)] == [["KC"], ["8D"], ["7H"], ["5S"]]
    assert [view[f"r{i}"] for i in range(1, 6)] == [["4D"], ["7C"], ["7S"], ["8C"], ["AC"]]
    assert top_first(view["stock"], 5) == ["9C", "5C", "QC", "QD", "6C"]
    assert view["stock"][0] == "6H"


def test_rules_md_castles_end_deal_1() -> None:
    rules = get_ruleset("castles-end")
    view = rules.full_view(rules.deal(1))
    assert view["t1"] == ["AS", "8C", "3S", "5C", "JC", "7D"]
    assert view["t2"] == ["8D", "7C", "5S", "JH", "JD", "AC"]
    assert view["t10"] == ["3H", "QC", "9C", "6H", "4C"]


def test_rules_md_patriarchs_deal_1() -> None:
    rules = get_ruleset("patriarchs")
    view = rules.full_view(rules.deal(1))
    reserves = [view[f"r{i}"] for i in range(1, 10)]
    assert reserves == [[c] for c in "5H 9S QS QS 8S AC 7H TH 3H".split()]
    assert top_first(view["stock"], 5) == ["6S", "JS", "AD", "JD", "9H"]
    assert view["stock"][0] == "2S"
    assert [view[f"f{i}"] for i in range(1, 9)] == [
        ["AC"], ["AD"], ["AH"], ["AS"], ["KC"], ["KD"], ["KH"], ["KS"],
    ]  # fmt: skip


# -- (b) the fixture files -----------------------------------------------------------------


def fixture(slug: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{slug}.json").read_text(encoding="utf-8"))
    return data


def test_every_game_has_a_fixture_with_the_quoted_deals() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(GAMES)
    for slug in GAMES:
        numbers = [deal["number"] for deal in fixture(slug)["deals"]]
        assert len(numbers) >= 3 and 1 in numbers, slug
        assert len(set(numbers)) == len(numbers), slug
    assert 1_000_000 in [deal["number"] for deal in fixture("quadrangle")["deals"]]


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_fixture_deals_match_a_fresh_deal(slug: str) -> None:
    data = fixture(slug)
    assert data["game"] == slug
    assert data["algorithm"] == ALGORITHM == "v1"
    assert data["key"].encode() == DEVELOPMENT_KEY
    rules = get_ruleset(slug)
    for deal in data["deals"]:
        state = rules.deal(deal["number"])
        assert rules.full_view(state) == deal["layout"], deal["number"]
        assert dumps(state) == deal["state"], deal["number"]
        assert loads(deal["state"]) == state
        cards = Counter(code for pile in deal["layout"].values() for code in pile)
        assert len(cards) == 52 and set(cards.values()) == {rules.decks}


def test_fixture_files_are_exactly_what_make_golden_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN.parent / "make_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for slug in GAMES:
        expected = module.render(module.golden(slug))
        assert (GOLDEN / f"{slug}.json").read_text(encoding="utf-8") == expected, slug
