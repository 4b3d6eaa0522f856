"""The tests follow the source tree: each module ``app/<path>/<m>.py`` has its own tests in
``tests/<path>/test_<m>.py`` (or ``test_<m>_<topic>.py`` when it has several), so that whoever
changes a module knows where its tests are. A package whose ``__init__.py`` defines functions or
classes (not only re-exports) is a module too: ``app/jobs/__init__.py`` has
``tests/jobs/test_jobs.py``. The few modules with nothing to test on their own are listed below
with where they are exercised instead."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
TESTS = ROOT / "tests"

# A module listed here has no file of its own, and the reason says why and where it is tested.
ELSEWHERE: dict[str, str] = {
    "app/engine/rules_view.py": "a Protocol only: mypy checks it wherever assist and words use it",
    "app/solver/result.py": "plain dataclasses and an enum that every search test asserts on "
    "(tests/solver/test_searches.py, test_search.py)",
    "app/solver/__init__.py": "solve(), one line over search.solve_state "
    "(tests/solver/test_search.py)",
    "app/engine/games/__init__.py": "the registry of the five rulesets, which every engine test "
    "goes through; an unknown slug in tests/engine/test_errors.py",
}
DEFINES = re.compile(r"^(?:async def|def|class) ", re.MULTILINE)


def modules(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.py")
        if p.name != "__init__.py" or (p.parent != root and DEFINES.search(p.read_text()))
    )


def mirrored(module: Path, app: Path = APP, tests: Path = TESTS) -> list[Path]:
    """The test files of ``module``: ``test_<m>.py`` and ``test_<m>_<topic>.py`` in the mirrored
    folder, but not a topic file that is itself the mirror of a sibling module
    (``test_solver_pool.py`` belongs to ``solver_pool.py``, not to ``solver.py``)."""
    folder = tests / module.parent.relative_to(app)
    stem = module.parent.name if module.name == "__init__.py" else module.stem
    longer = {p.stem for p in module.parent.glob("*.py") if len(p.stem) > len(stem)}

    def others_own(name: str) -> bool:
        return any(name.startswith(s) for s in longer)

    return [
        candidate
        for candidate in sorted(folder.glob(f"test_{stem}*.py"))
        if (name := candidate.stem.removeprefix("test_")) == stem
        or (name.startswith(stem + "_") and not others_own(name))
    ]


def test_the_mirror_pairs_modules_with_their_files(tmp_path: Path) -> None:
    app, tests = tmp_path / "app", tmp_path / "tests"
    for path in ("svc/solver.py", "svc/solver_pool.py", "svc/games.py"):
        (app / path).parent.mkdir(parents=True, exist_ok=True)
        (app / path).write_text("")
    for path in ("svc/test_solver_pool.py", "svc/test_games.py", "svc/test_games_bounded.py"):
        (tests / path).parent.mkdir(parents=True, exist_ok=True)
        (tests / path).write_text("")
    (app / "svc/__init__.py").write_text("def run() -> None: ...\n")
    (tests / "svc/test_svc.py").write_text("")
    assert [p.name for p in mirrored(app / "svc/__init__.py", app, tests)] == ["test_svc.py"]
    assert mirrored(app / "svc/solver.py", app, tests) == []
    assert [p.name for p in mirrored(app / "svc/solver_pool.py", app, tests)] == [
        "test_solver_pool.py"
    ]
    assert [p.name for p in mirrored(app / "svc/games.py", app, tests)] == [
        "test_games.py",
        "test_games_bounded.py",
    ]


def test_every_module_has_its_tests_where_the_tree_says() -> None:
    missing = [
        str(m.relative_to(ROOT))
        for m in modules(APP)
        if not mirrored(m) and str(m.relative_to(ROOT)) not in ELSEWHERE
    ]
    assert missing == [], "modules without tests/<path>/test_<module>.py: " + ", ".join(missing)


def test_every_test_folder_is_a_package() -> None:
    # Two files of one name in two folders (tests/web/api/test_rooms.py and
    # tests/services/rooms/…) import only when each folder is a package.
    bare = [
        str(d.relative_to(ROOT))
        for d in sorted({p.parent for p in TESTS.rglob("test_*.py")})
        if not (d / "__init__.py").exists()
    ]
    assert bare == []


def test_every_exception_names_a_module_without_a_file() -> None:
    for name in ELSEWHERE:
        module = ROOT / name
        assert module.exists(), f"{name} is gone: take it off the list"
        assert not mirrored(module), f"{name} has its own tests now: take it off the list"
