"""The registry of search models (app/solver/models.py): one model per game, made once."""

from __future__ import annotations

from app.engine import GAMES
from app.solver import model_for


def test_every_game_has_a_model() -> None:
    assert {model_for(g).slug for g in GAMES} == set(GAMES)
