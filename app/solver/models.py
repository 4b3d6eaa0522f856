"""The registry of game models the search runs on: game slug → model."""

from __future__ import annotations

from collections.abc import Callable

from app.engine import Ruleset, get_ruleset
from app.solver.castles_end import CastlesEndModel
from app.solver.corners import CornersModel
from app.solver.patriarchs import PatriarchsModel
from app.solver.position import Model
from app.solver.quadrangle import QuadrangleModel
from app.solver.quadruple_interchange import QuadrupleInterchangeModel

_MODELS: dict[str, Model] = {}
_KINDS: dict[str, Callable[[Ruleset], Model]] = {
    "castles-end": CastlesEndModel,
    "corners": CornersModel,
    "patriarchs": PatriarchsModel,
    "quadrangle": QuadrangleModel,
    "quadruple-interchange": QuadrupleInterchangeModel,
}


def model_for(slug: str) -> Model:
    """The search model of a game (raises ``UnknownGame`` for an unknown slug)."""
    rules = get_ruleset(slug)
    model = _MODELS.get(slug)
    if model is None:
        model = _MODELS[slug] = _KINDS[slug](rules)
    return model
