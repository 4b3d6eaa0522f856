"""The load balancer's question (app/services/availability.py): the database answers, or it
is unavailable for now; any other failure is a bug and is raised, not hidden as "down"."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import Session, sessionmaker

from app.services import availability
from app.services.availability import Health


class Failing:
    """A sessionmaker whose sessions fail with ``error`` at the first query."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.closed = 0

    def __call__(self) -> Failing:
        return self

    def __enter__(self) -> Failing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed += 1

    def execute(self, statement: Any) -> None:
        raise self.error


def health(sessions: object) -> Health:
    return Health(cast(sessionmaker[Session], sessions))


def test_a_database_that_answers_is_up(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'up.db'}")
    try:
        assert health(sessionmaker(engine)).database_answers()
    finally:
        engine.dispose()


def test_a_database_that_cannot_be_opened_is_down(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}")
    try:
        assert not health(sessionmaker(engine)).database_answers()
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("SELECT 1", {}, sqlite3.OperationalError("database is locked")),
        sqlite3.OperationalError("unable to open database file"),
        # Any other error of the database layer means it cannot answer the trivial query.
        ProgrammingError("SELECT 1", {}, Exception("cannot run")),
    ],
)
def test_database_errors_say_down(error: BaseException) -> None:
    failing = Failing(error)
    assert not health(failing).database_answers()
    assert failing.closed == 1


def test_a_bug_is_raised_not_reported_as_down() -> None:
    with pytest.raises(ZeroDivisionError):
        health(Failing(ZeroDivisionError("a bug"))).database_answers()


def test_it_names_the_unavailable_errors_for_the_web() -> None:
    assert availability.is_unavailable(OperationalError("x", {}, Exception("gone")))
    assert not availability.is_unavailable(ValueError("bad input"))
    assert sqlite3.OperationalError in availability.UNAVAILABLE_ERRORS
    assert availability.summary(ValueError("first line\nsecond")) == "ValueError: first line"
