"""The browser move path reads top to bottom (issue 12): each board action of app/web/pages/play.py
makes one call to the game service; the rest (which card goes up by itself, what the Deal
button means, the words) is the service's and the engine's. The layers themselves are import
rules in pyproject.toml, checked by lint-imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLAY = Path(__file__).resolve().parents[2] / "app" / "web" / "pages" / "play.py"
ACTIONS = {"move": "play", "undo": "undo", "resign": "resign", "finish": "finish"}
ACTIONS["restart"] = "restart"


def _functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(PLAY.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _service_calls(function: ast.FunctionDef) -> list[str]:
    """The ``games.<method>(…)`` calls a handler makes itself (not those of the helpers that
    answer a refusal by reading the board again)."""
    return [
        node.func.attr
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "games"
    ]


@pytest.mark.parametrize(("handler", "service"), sorted(ACTIONS.items()))
def test_each_board_action_is_one_service_call(handler: str, service: str) -> None:
    assert _service_calls(_functions()[handler]) == [service]


def test_the_web_layer_never_reads_the_engine_state_in_play() -> None:
    """The handlers work from what the service returns; ``.state`` (the unmasked engine
    state) is not read anywhere in play.py."""
    source = PLAY.read_text(encoding="utf-8")
    assert ".state" not in source.replace("request.state", "")
