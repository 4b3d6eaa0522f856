"""Quadrangle's search model (app/solver/quadrangle.py): a card played home alone (its safe
moves) keeps every win, checked against an exhaustive search of the engine's own moves; the
layout its key slices, and its scores."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st

from app.engine import Move, State, get_ruleset
from app.solver import Budget, Outcome, solve
from app.solver.quadrangle import QuadrangleModel
from tests.solver.positions import _spread, exhaustive, rest_empty

RULES = get_ruleset("quadrangle")
MODEL = QuadrangleModel(RULES)


@st.composite
def quadrangle_full_tableau(draw: st.DrawFn) -> State:
    """Foundations partly built and every tableau pile holding a card (as in play, where an
    emptied pile is refilled while the waste or the stock holds a card); the rest of the loose
    cards on the tableau, the waste and the stock. Foundations often stop side by side, so
    that both copies of a card are home and the safe rule applies."""
    base = draw(st.integers(0, 12))
    piles: list[tuple[int, ...]] = [()] * len(RULES.pile_ids)
    loose: list[int] = []
    for i, f in enumerate(RULES.foundations):
        s = i // 2
        n = draw(st.integers(10, 13)) if i else 13
        cards = [s * 13 + (base + d) % 13 for d in range(13)]
        piles[f] = tuple(cards[:n])
        loose += cards[n:]
    if len(loose) < len(RULES.tableau):
        reject()
    order = list(draw(st.permutations(loose)))
    tableau = draw(st.integers(len(RULES.tableau), len(order)))
    spread = _spread(draw, order[:tableau], len(RULES.tableau), full=True)
    for t, pile in zip(RULES.tableau, spread):
        piles[t] = tuple(pile)
    split = draw(st.integers(tableau, len(order)))
    piles[RULES.waste] = tuple(order[tableau:split])
    piles[RULES.stock] = tuple(order[split:])
    return State(RULES.slug, tuple(piles))


def _safe_move(state: State) -> State | None:
    """The position after the model's safe move, or None where it plays none."""
    piles = MODEL.encode(state.piles)
    kids = MODEL.children(piles, 0)
    every = MODEL.all_children(piles, 0)
    if len(kids) != 1 or len(every) == 1:
        return None
    (mv, _, _) = kids[0]
    assert mv in [m for m, _, _ in every]
    src, dst, count = mv
    assert dst in RULES.foundations and src in RULES.tableau and count == 1
    ids = RULES.pile_ids
    return RULES.apply(state, Move(ids[src], ids[dst], 1))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=quadrangle_full_tableau())
def test_a_safe_move_never_turns_a_won_position_into_a_lost_one(state: State) -> None:
    after = _safe_move(state)
    event("safe move" if after is not None else "no safe move")
    if after is None:
        reject()
    before_truth = exhaustive(state, limit=30_000)
    after_truth = exhaustive(after, limit=30_000)
    if before_truth is None or after_truth is None:
        reject()
    assert after_truth is before_truth


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=quadrangle_full_tableau())
def test_with_safe_moves_the_solver_agrees_with_exhaustive_search(state: State) -> None:
    truth = exhaustive(state, limit=30_000)
    if truth is None:
        reject()
    result = solve(state, Budget(nodes=2_000_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert rest_empty(RULES, RULES.replay(state, result.moves))


def _built(tableau: list[list[int]], waste: list[int]) -> State:
    """Base rank A: clubs' foundations at 2C and 3C, diamonds and hearts complete, spades' at AS;
    the tableau and the waste as given, the stock empty (a position for the move generator,
    not a whole deck)."""
    piles: list[tuple[int, ...]] = [()] * len(RULES.pile_ids)
    lengths = (2, 3, 13, 13, 13, 13, 1, 1)
    for i, (f, n) in enumerate(zip(RULES.foundations, lengths)):
        piles[f] = tuple((i // 2) * 13 + d for d in range(n))
    for t, pile in zip(RULES.tableau, tableau):
        piles[t] = tuple(pile)
    piles[RULES.waste] = tuple(waste)
    return State(RULES.slug, tuple(piles))


# 4S..KS (faces 42..51): none of them can go home (spades need 2S next).
_FILL = [[42 + k] for k in range(10)]
_3S, _3C, _4C = 41, 2, 3


def _moves(state: State) -> list[tuple[int, ...]]:
    return [mv for mv, _, _ in MODEL.children(MODEL.encode(state.piles), 0)]


def test_the_safe_rule_plays_a_card_home_alone_only_under_its_three_conditions() -> None:
    t1, f1 = RULES.pile_index("t1"), RULES.foundations[0]
    # 3C on a two-card pile, both 2C home, nothing to refill: played alone.
    assert _moves(_built([[_3S, _3C], *_FILL, [_3S]], [])) == [(t1, f1, 1)]
    # (a): 4C can go home, but one 3C is still out: every move is kept.
    assert len(_moves(_built([[_3S, _4C], *_FILL], []))) > 1
    # (b): 3C alone in its pile, which the waste would refill.
    assert len(_moves(_built([[_3C], *_FILL, [_3S]], [_3S]))) > 1
    # (c): an empty tableau pile while the waste holds a card.
    assert len(_moves(_built([[_3S, _3C], *_FILL], [_3S]))) > 1


def test_the_quadrangle_model_refuses_a_layout_its_key_cannot_slice() -> None:
    """The key takes the foundations and the tableau as two slices of the piles."""
    rules = get_ruleset("quadrangle")

    class Shuffled:  # the engine's layout with two tableau piles' places swapped
        slug, pile_ids, stock, waste = rules.slug, rules.pile_ids, rules.stock, rules.waste
        foundations, reserves = rules.foundations, rules.reserves
        tableau = (rules.tableau[1], rules.tableau[0], *rules.tableau[2:])

    with pytest.raises(ValueError, match="contiguous"):
        QuadrangleModel(Shuffled())  # type: ignore[arg-type]


def test_quadrangle_searches_on_three_weights_of_the_waste() -> None:
    model = QuadrangleModel(get_ruleset("quadrangle"))
    piles = model.encode(get_ruleset("quadrangle").deal(1).piles)
    home = 8 * sum(len(piles[f]) for f in model.f)
    waste = len(piles[model.waste])
    assert [s(piles) for s in model.scores] == [home - w * waste for w in (1, 8, 16)]
    assert model.score(piles) == model.scores[0](piles)
