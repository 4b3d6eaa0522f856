"""The state value type (app/engine/state.py): immutable, hashable and equal by value, so that
states can be cached, compared and replayed; redeals are part of a state."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import Move, State, Step, get_ruleset


def test_equal_states_are_one_key() -> None:
    a = State("corners", ((1, 2), (), (~3,)))
    b = State("corners", ((1, 2), (), (~3,)))
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a.redeals == 0


def test_redeals_and_face_down_cards_tell_states_apart() -> None:
    piles = ((1, 2), (), (3,))
    assert State("corners", piles) != State("corners", piles, redeals=1)
    assert State("corners", piles) != State("corners", ((1, 2), (), (~3,)))
    assert State("corners", piles) != State("patriarchs", piles)


def test_a_state_cannot_be_changed_in_place() -> None:
    state = get_ruleset("quadrangle").deal(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.redeals = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.piles = ()  # type: ignore[misc]
    assert isinstance(state.piles, tuple) and all(isinstance(p, tuple) for p in state.piles)


def test_a_step_records_both_states_and_is_a_value_too() -> None:
    rules = get_ruleset("quadrangle")
    before = rules.deal(1)
    step = rules.step(before, Move("stock", "waste"))
    assert step.before is before and step.after == rules.apply(before, Move("stock", "waste"))
    assert step == Step(before, Move("stock", "waste"), step.after, True, ("stock", "waste"))
    assert hash(step) == hash(rules.step(before, Move("stock", "waste")))
