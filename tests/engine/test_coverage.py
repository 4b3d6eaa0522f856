"""Every numbered rule and every rules.md §7 scenario has a named test: this keeps it so."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from app.engine import GAMES

DOCS = Path(__file__).parents[2] / "docs" / "rules"
RULES = {
    "quadrangle": ["Q1", "Q2", "Q3", "Q4", "Q5"],
    "quadruple-interchange": ["I1", "I2", "I3", "I4", "I5", "I6"],
    "corners": ["C1", "C2", "C3", "C4"],
    "castles-end": ["E1", "E2", "E3", "E4", "E5"],
    "patriarchs": ["P1", "P2", "P3", "P4", "P5", "P6"],
}
SCENARIOS = {
    "a full wrap-around foundation that refuses a 14th card": (
        "quadrangle",
        "test_Q1_wrapped_foundation_is_complete_at_13_and_refuses_a_14th_card",
    ),
    "K-on-A legal but A-on-K illegal in Quadrangle": (
        "quadrangle",
        "test_Q2_king_goes_on_ace_but_ace_not_on_king",
    ),
    "a Quadrangle pile emptied with waste empty taking the stock top": (
        "quadrangle",
        "test_Q4_emptied_pile_takes_the_stock_top_when_the_waste_is_empty",
    ),
    "a pile emptied with stock and waste empty staying empty and taking any card": (
        "quadrangle",
        "test_Q4_pile_emptied_without_stock_or_waste_stays_empty_and_takes_any_card",
    ),
    "a Quadruple Interchange partial run moved onto a matching card": (
        "quadruple_interchange",
        "test_I3_partial_run_moves_onto_a_matching_card",
    ),
    "... and onto an empty pile": (
        "quadruple_interchange",
        "test_I3_partial_run_moves_onto_an_empty_pile",
    ),
    "... and a broken-suit run refused": (
        "quadruple_interchange",
        "test_I3_broken_suit_run_is_refused",
    ),
    "a face-down card flipping in the same step and restored by undo": (
        "quadruple_interchange",
        "test_I5_face_down_card_flips_in_the_same_step_and_undo_restores_it",
    ),
    "a Corners reserve refilled from the stock (not the waste)": (
        "corners",
        "test_C3_emptied_reserve_is_refilled_from_the_stock_not_the_waste",
    ),
    "vacancies filled at redeal in order r1…r5": (
        "corners",
        "test_C4_redeal_fills_vacant_reserves_in_order_r1_to_r5",
    ),
    "a third Corners redeal refused": ("corners", "test_C4_third_redeal_refused"),
    "Castle's End tableau moves refused before the base is chosen": (
        "castles_end",
        "test_E1_tableau_moves_refused_before_the_base_is_chosen",
    ),
    "A↔K refused in the tableau": (
        "castles_end",
        "test_E3_ace_and_king_are_not_neighbours_in_the_tableau",
    ),
    "a Patriarchs transfer sliding the meeting point down to the bottom Ace and refusing "
    "to move the Ace itself": (
        "patriarchs",
        "test_P5_transfer_slides_the_meeting_point_down_to_the_bottom_ace",
    ),
    "transfers refused across a gap": ("patriarchs", "test_P5_transfers_refused_across_a_gap"),
    "... or an overlap": ("patriarchs", "test_P5_transfers_refused_across_an_overlap"),
    "a card that fits both Patriarchs foundations offered to both": (
        "patriarchs",
        "test_P6_a_card_that_fits_both_foundations_is_offered_to_both",
    ),
    "a second Patriarchs redeal refused": ("patriarchs", "test_P4_second_redeal_refused"),
}


def functions_in(module: str) -> list[str]:
    loaded = importlib.import_module(f"tests.engine.games.test_{module}")
    return [name for name in dir(loaded) if name.startswith("test_")]


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_every_numbered_rule_has_a_named_test(slug: str) -> None:
    published = re.findall(r"^\*\*([A-Z]\d) ", (DOCS / f"{slug}.md").read_text(), re.M)
    assert published == RULES[slug]
    names = functions_in(slug.replace("-", "_"))
    for rule in RULES[slug]:
        assert any(name.startswith(f"test_{rule}_") for name in names), rule


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_section_7_scenario_has_a_test(scenario: str) -> None:
    module, name = SCENARIOS[scenario]
    assert name in functions_in(module)
