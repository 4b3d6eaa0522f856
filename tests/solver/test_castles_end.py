"""Castle's End's search model (app/solver/castles_end.py): the base chosen on f1 alone, a safe
foundation move played alone, no pointless moves, keys blind to which pile is where, and a
score that only orders the search. Its answers against exhaustive search: test_search.py."""

from __future__ import annotations

from collections.abc import Sequence

from app.engine import State, get_ruleset
from app.solver.castles_end import CastlesEndModel, encode
from app.solver.lines import to_moves
from tests.engine.builders import position

RULES = get_ruleset("castles-end")
MODEL = CastlesEndModel(RULES)


def all_bytes(piles: Sequence[object]) -> bool:
    return all(type(p) is bytes for p in piles)


def moves_of(state: State, *, every: bool = False) -> list[str]:
    kids = (MODEL.all_children if every else MODEL.children)(state.piles, 0)
    return [str(m) for m in to_moves(MODEL, [mv for mv, _, _ in kids])]


def test_children_are_the_engines_moves_on_bytes_piles() -> None:
    state = position("castles-end", f1="5S", t1="6S 9D", t2="8D", t3="7H", t4="6H")
    kids = MODEL.all_children(state.piles, 0)
    assert kids
    for mv, child, redeals in kids:
        assert all_bytes(child) and redeals == 0
        (move,) = to_moves(MODEL, [mv])
        assert tuple(map(tuple, child)) == RULES.apply(state, move).piles
    assert all_bytes(encode(state.piles))
    assert MODEL.encode(MODEL.encode(state.piles)) == MODEL.encode(state.piles)


def test_before_the_base_is_chosen_each_top_card_may_choose_it_on_f1() -> None:
    # E1: the engine offers every foundation; they are alike, so the model offers f1 only.
    state = position("castles-end", t1="6S 9D", t2="8D", t5="KC")
    assert moves_of(state) == ["t1-f1", "t2-f1", "t5-f1"]
    assert {str(m) for m in RULES.legal_moves(state)} >= {"t1-f4", "t2-f3"}
    assert MODEL.base(state.piles) == -1


def test_a_card_that_may_go_home_is_played_alone() -> None:
    # Base 5: 6♠ goes on 5♠; nothing else is worth trying first (the safe-move proof).
    state = position("castles-end", f1="5S", t1="9D 6S", t2="8D", t3="7D")
    assert moves_of(state) == ["t1-f1"]
    assert len(moves_of(state, every=True)) > 1


def test_a_base_rank_card_other_than_an_ace_is_not_forced() -> None:
    # Base 5: 5♥ may start a foundation, but its neighbour below (4♥) is its suit's last card,
    # so playing it may lose; it comes first, with the other moves after it.
    state = position("castles-end", f1="5S", t1="9D 5H", t2="4H", t3="8D")
    assert moves_of(state)[0] == "t1-f2"
    assert len(moves_of(state)) > 1
    # With the Ace as base, an Ace has no neighbour below: it goes home alone.
    aces = position("castles-end", f1="AS", t1="9D AH", t2="2H", t3="8D")
    assert moves_of(aces) == ["t1-f2"]


def test_no_pointless_moves_to_empty_piles() -> None:
    # t1..t3 hold cards, t4..t10 are empty: a card goes to the first empty pile only, and a
    # pile's only card goes to none.
    state = position("castles-end", f1="5S", t1="9D JC", t2="TC", t3="2H")
    assert sorted(moves_of(state)) == ["t1-t2", "t1-t4", "t2-t1"]
    engine = {str(m) for m in RULES.legal_moves(state)}
    assert {"t1-t5", "t2-t4", "t3-t4"} <= engine


def test_the_key_sees_the_base_and_the_tableau_not_which_pile_is_where() -> None:
    one = position("castles-end", f1="5S", f2="5H", t1="9D JC", t2="TC", t3="2H")
    other = position("castles-end", f3="5S", f1="5H", t4="TC", t2="2H", t9="9D JC")
    assert MODEL.key(one.piles, 0) == MODEL.key(other.piles, 0)
    assert MODEL.key(MODEL.encode(one.piles), 0) == MODEL.key(one.piles, 0)
    base_six = position("castles-end", f1="6S", f2="6H", t1="9D JC", t2="TC", t3="2H")
    assert MODEL.key(base_six.piles, 0) != MODEL.key(one.piles, 0)
    split = position("castles-end", f1="5S", f2="5H", t1="9D", t2="TC JC", t3="2H")
    assert MODEL.key(split.piles, 0) != MODEL.key(one.piles, 0)


def test_won_once_the_tableau_is_empty() -> None:
    suits = {f"f{i + 1}": " ".join(r + s for r in "56789TJQKA234") for i, s in enumerate("CDHS")}
    assert MODEL.won(position("castles-end", suits).piles)
    assert not MODEL.won(position("castles-end", f1="5S", t1="6S").piles)


def test_the_score_grows_with_cards_home_and_falls_with_buried_next_cards() -> None:
    assert MODEL.score(RULES.deal(1).piles) == 0  # no base yet: nothing to measure
    near = position("castles-end", f1="5S 6S", t1="9D 7S", t2="8D")
    buried = position("castles-end", f1="5S 6S", t1="7S 9D", t2="8D")
    home = position("castles-end", f1="5S 6S 7S", t1="9D", t2="8D")
    assert MODEL.score(home.piles) > MODEL.score(near.piles) > MODEL.score(buried.piles)
    empty = position("castles-end", f1="5S 6S", t1="9D 7S", t2="8D", t3="")
    spread = position("castles-end", f1="5S 6S", t1="9D 7S", t2="8D", t3="QH")
    assert MODEL.score(empty.piles) > MODEL.score(spread.piles)
