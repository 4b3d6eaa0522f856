"""What every game's search model starts from (app/solver/position.py): where its piles are,
when a position is won, piles taken as one slice, and a model's own form of the piles."""

from __future__ import annotations

import pytest

from app.engine import GAMES, get_ruleset
from app.solver import model_for
from app.solver.position import Layout, encoded
from tests.engine.builders import position


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_a_layout_knows_the_games_piles_and_every_other_pile_than_the_foundations(
    slug: str,
) -> None:
    rules = get_ruleset(slug)
    layout = Layout(rules)
    assert (layout.slug, layout.pile_ids) == (slug, rules.pile_ids)
    assert (layout.stock, layout.waste) == (rules.stock, rules.waste)
    assert (layout.f, layout.t, layout.r) == (rules.foundations, rules.tableau, rules.reserves)
    assert sorted(layout.rest + layout.f) == list(range(len(rules.pile_ids)))


def test_won_when_no_pile_but_the_foundations_holds_a_card() -> None:
    layout = Layout(get_ruleset("corners"))
    bases = {"f1": "KC", "f2": "QD", "f3": "7H", "f4": "5S"}
    assert layout.won(position("corners", bases).piles)
    for pile in ("stock", "waste", "r5"):
        assert not layout.won(position("corners", {**bases, pile: "9H"}).piles), pile


def test_piles_side_by_side_are_one_slice_and_others_are_refused() -> None:
    assert Layout.span((2, 3, 4, 5)) == slice(2, 6)
    assert Layout.span((7,)) == slice(7, 8)
    for gap in ((2, 4), (3, 2), ()):
        with pytest.raises(ValueError, match="contiguous"):
            Layout.span(gap)


def test_encoded_gives_a_models_own_form_of_the_piles_or_the_piles_themselves() -> None:
    piles = get_ruleset("castles-end").deal(1).piles
    as_bytes = encoded(model_for("castles-end"), piles)
    assert all(isinstance(p, bytes) for p in as_bytes)
    assert [tuple(p) for p in as_bytes] == [tuple(p) for p in piles]
    assert encoded(model_for("castles-end"), as_bytes) == as_bytes
    corners = get_ruleset("corners").deal(1).piles
    assert encoded(model_for("corners"), corners) is corners  # no ``encode``: as they are
