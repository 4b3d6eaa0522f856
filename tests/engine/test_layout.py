"""Game layouts (app/engine/layout.py): piles as data the web renders without the rules."""

from __future__ import annotations

import pytest

from app.engine import GAMES, Layout, PileKind, PileSpec


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_every_game_has_one_pile_per_id_and_per_cell(slug: str) -> None:
    layout = GAMES[slug].layout
    assert len({p.id for p in layout.piles}) == len(layout.piles)
    assert len({(p.row, p.col) for p in layout.piles}) == len(layout.piles)
    assert all(0 <= p.row < layout.rows and 0 <= p.col < layout.cols for p in layout.piles)
    assert [layout.index[p.id] for p in layout.piles] == list(range(len(layout.piles)))


def test_a_layout_refuses_two_piles_with_one_id_or_one_cell() -> None:
    t1 = PileSpec("t1", PileKind.TABLEAU, 0, 0)
    with pytest.raises(ValueError, match="share an id or a cell"):
        Layout((t1, PileSpec("t1", PileKind.TABLEAU, 0, 1)), rows=1, cols=2)
    with pytest.raises(ValueError, match="share an id or a cell"):
        Layout((t1, PileSpec("t2", PileKind.TABLEAU, 0, 0)), rows=1, cols=2)
    two = Layout((t1, PileSpec("t2", PileKind.TABLEAU, 0, 1)), rows=1, cols=2)
    assert two.index == {"t1": 0, "t2": 1} and two.indices(PileKind.TABLEAU) == (0, 1)
