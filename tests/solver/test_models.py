"""The registry of search models (app/solver/models.py): one model per game, made once."""

from __future__ import annotations

import pytest

from app.engine import GAMES, UnknownGame, get_ruleset
from app.solver import model_for


def test_every_game_has_a_model() -> None:
    assert {model_for(g).slug for g in GAMES} == set(GAMES)


def test_a_model_is_made_once_per_game_from_its_ruleset() -> None:
    for slug in GAMES:
        model = model_for(slug)
        assert model_for(slug) is model
        assert model.pile_ids == get_ruleset(slug).pile_ids


def test_an_unknown_game_has_no_model() -> None:
    with pytest.raises(UnknownGame):
        model_for("klondike")
