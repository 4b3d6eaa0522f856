"""A hint as the web gets it (app/services/hint_views.py): read from a solver worker's plain
answer, and casual from the first hint on."""

from __future__ import annotations

from typing import Any

from app.engine import Move, Words
from app.services.hint_views import HintView


def answer(**changes: Any) -> dict[str, Any]:
    """A worker's answer as app/services/solver_jobs.py ``hint_job`` returns it."""
    base: dict[str, Any] = {
        "move": {"from": "t3", "to": "f1", "count": 1},
        "outcome": "winnable",
        "exact": True,
        "message": "This position can be won.",
        "chance": None,
        "words": [],
        "line": ["t3-f1", "t4-f2"],
    }
    return base | changes


def test_a_workers_answer_becomes_a_move_and_its_line() -> None:
    view = HintView.of(answer())
    assert view.move == Move("t3", "f1", 1) and str(view.move) == "t3-f1"
    assert (view.outcome, view.exact) == ("winnable", True)
    assert view.message == "This position can be won."
    assert view.line == ["t3-f1", "t4-f2"]
    assert view.chance is None and view.words == []
    # What the service fills in later: the version it is for and the hints so far.
    assert (view.version, view.hints_used) == (0, 0)


def test_a_move_of_several_cards_keeps_its_count() -> None:
    view = HintView.of(answer(move={"from": "t2", "to": "t7", "count": "3"}))
    assert view.move == Move("t2", "t7", 3) and str(view.move) == "t2-t7/3"


def test_no_move_is_a_hint_without_a_move() -> None:
    view = HintView.of(answer(move=None, outcome="lost", exact=True, line=[]))
    assert view.move is None and view.outcome == "lost"


def test_an_estimate_keeps_its_chance_and_words() -> None:
    words = Words("estimate", "won in %(share)s of the arrangements", {"share": "40%"})
    view = HintView.of(
        answer(outcome="estimate", exact=False, chance=0.4, words=[words], line=None)
    )
    assert view.chance == 0.4 and view.words == [words]
    assert view.line == []  # a missing line is an empty one
    assert not view.exact


def test_an_answer_without_words_or_line_gets_empty_lists_of_its_own() -> None:
    sparse = answer()
    del sparse["words"], sparse["line"], sparse["chance"]
    first, second = HintView.of(sparse), HintView.of(sparse)
    assert first.words == [] and first.line == [] and first.chance is None
    first.line.append("t1-f1")
    assert second.line == []  # not one list shared between hints


def test_a_game_is_casual_from_its_first_hint() -> None:
    view = HintView(None, "unknown", False, "The solver is busy.")
    assert not view.casual
    view.hints_used = 1
    assert view.casual
