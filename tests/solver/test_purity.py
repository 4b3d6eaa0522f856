"""The solver is pure like the engine: standard library only, the engine's public names only,
no clock, no randomness, no I/O (its time budget is a check the caller passes in)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SOLVER_DIR = Path(__file__).resolve().parents[2] / "app" / "solver"
MODULES = sorted(SOLVER_DIR.glob("*.py"))
FORBIDDEN = {"time", "random", "os", "io", "socket", "datetime", "threading", "subprocess"}


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def test_there_are_solver_modules_to_check() -> None:
    assert {p.stem for p in MODULES} >= {"search", "hints", "castles_end", "corners"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_the_solver_imports_only_the_standard_library_and_the_engine(path: Path) -> None:
    for name in imports(path):
        top = name.split(".")[0]
        if name == "app.engine" or name == "app.solver" or name.startswith("app.solver."):
            continue
        assert top in sys.stdlib_module_names, f"{path.stem} imports {name}"
        assert top not in FORBIDDEN, f"{path.stem} imports {name}"
        assert top != "__future__" or name == "__future__"
