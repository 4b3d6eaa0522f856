"""Helpers of the competition tests: fresh certified deals, a clock to move, winning a game."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import DealVerdict, Game
from app.services import pool
from app.services.solver_jobs import judge_deal
from tests.web.support import move, solver_of

GAME = "corners"  # its solver decides most deals in a fraction of a second
FIRST_DEAL = 7_000_001


def ensure_fresh(app: FastAPI, count: int, slug: str = GAME) -> None:
    """At least ``count`` certified deals of ``slug`` nobody has played or claimed, certified
    from FIRST_DEAL on: the competition tests claim (and seal) only deals no other test plays
    by its number (other tests' certify runs walk 1, 2, 3, …)."""
    solver = solver_of(app)
    for _ in range(10 * count + 20):
        with app.state.services.sessions() as db:
            if len(pool.fresh_deals(db, slug)) >= count:
                return
            highest = db.scalar(
                select(func.max(DealVerdict.deal)).where(
                    DealVerdict.game == slug, DealVerdict.deal >= FIRST_DEAL
                )
            )
        number = (highest or FIRST_DEAL - 1) + 1
        verdict = judge_deal(slug, number, app.state.settings.deal_key_bytes, 50_000)
        solver.store(verdict, certified=True)
    raise AssertionError("could not certify enough deals")


class Clock:
    """The games' clock, moved by the test."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def day(self, day: date, hour: int = 12, minute: int = 0) -> None:
        self.at = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)


@contextmanager
def clock_at(app: FastAPI, monkeypatch: pytest.MonkeyPatch, at: datetime) -> Iterator[Clock]:
    clock = Clock(at)
    monkeypatch.setattr(app.state.services.sealer, "clock", clock)
    yield clock


def future_day(days: int) -> date:
    """A day ahead of the real one, for a test's clock (the one Sealer's, which the seal, the
    challenge and the events share): no game of another test was played on it."""
    return datetime.now(UTC).date() + timedelta(days=days)


def solution_of(app: FastAPI, game_id: str) -> list[str]:
    with app.state.services.sessions() as db:
        game = db.get(Game, game_id)
        assert game is not None
        text = db.scalar(
            select(DealVerdict.solution).where(
                DealVerdict.game == game.game, DealVerdict.deal == game.deal
            )
        )
    assert text
    return str(text).split()


def win(api: TestClient, app: FastAPI, game_id: str, headers: dict[str, str]) -> dict[str, Any]:
    """Plays the solver's line of the game's deal: a win at par."""
    version = api.get(f"/api/games/{game_id}", headers=headers).json()["version"]
    data: dict[str, Any] = {}
    for notation in solution_of(app, game_id):
        answer = move(api, game_id, notation, version, headers)
        assert answer.status_code == 200, answer.text
        data = answer.json()
        version = data["version"]
    assert data["status"] == "won", data
    return data
