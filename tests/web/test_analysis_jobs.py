"""The analysis of a finished game as a durable job (SOLVER_JOBS, issue #24): the app queues it
for the solver workers once the viewer has passed the solution's gate, and answers with what a
worker stored; it never searches in its own processes then. A worker that has not answered in
time gives an undecided answer, and its stored answer is found on the next request. (The worker
itself, ``python -m app.jobs``, is run by tests/deploy/test_compose.py.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.services.solver import Solver
from tests.web.support import new_player, solver_of, start

LOST_DEAL = 3  # Castle's End, development key: the solver proves it cannot be won


class Queue:
    """Stands for the job queue: records what was deferred; a "worker" may run it at once."""

    def __init__(self, solver: Solver, working: bool) -> None:
        self.solver, self.working = solver, working
        self.deferred: list[tuple[str, str, int, list[str]]] = []

    def defer(self, game_id: str, slug: str, number: int, moves: list[str]) -> None:
        self.deferred.append((game_id, slug, number, moves))
        if self.working:  # a worker elsewhere takes it (its own thread, not the request's)
            worker = threading.Thread(target=self.run, args=(game_id, slug, number, moves))
            worker.start()
            worker.join()

    def run(self, game_id: str, slug: str, number: int, moves: list[str]) -> None:
        assert self.solver.analyse_now(game_id, slug, number, moves)


@pytest.fixture()
def jobs_solver(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Solver]:
    solver = solver_of(app)

    async def no_search_here(*args: Any) -> None:
        raise AssertionError("the app searched in its own processes")

    monkeypatch.setattr(solver.pool, "run", no_search_here)
    monkeypatch.setattr(solver, "analysis_wait_seconds", 30.0)
    yield solver


def test_the_analysis_is_a_workers_job_and_the_app_answers_what_it_stored(
    api: TestClient, jobs_solver: Solver, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = Queue(jobs_solver, working=True)
    monkeypatch.setattr(jobs_solver, "analyse_later", queue.defer)
    game = start(api, "castles-end", LOST_DEAL)
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    found = api.get(f"/api/games/{game['id']}/analysis").json()
    assert found["deal_winnable"] is False and found["slip"] is None and found["decided"]
    assert queue.deferred == [(game["id"], "castles-end", LOST_DEAL, [])]
    # Stored with the game: asked again, nothing is queued.
    assert api.get(f"/api/games/{game['id']}/analysis").json() == found
    assert len(queue.deferred) == 1


def test_nothing_is_queued_for_a_viewer_the_gate_refuses(
    api: TestClient, jobs_solver: Solver, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = Queue(jobs_solver, working=True)
    monkeypatch.setattr(jobs_solver, "analyse_later", queue.defer)
    game = start(api, "castles-end", LOST_DEAL)
    assert api.get(f"/api/games/{game['id']}/analysis").status_code == 409  # still in play
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    other = new_player(api)
    assert api.get(f"/api/games/{game['id']}/analysis", headers=other).status_code == 403
    assert queue.deferred == []


def test_a_worker_that_has_not_answered_yet_gives_undecided_then_its_answer(
    api: TestClient, jobs_solver: Solver, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = Queue(jobs_solver, working=False)  # every worker is busy
    monkeypatch.setattr(jobs_solver, "analyse_later", queue.defer)
    monkeypatch.setattr(jobs_solver, "analysis_wait_seconds", 0.0)
    game = start(api, "castles-end", LOST_DEAL)
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    waiting = api.get(f"/api/games/{game['id']}/analysis").json()
    assert waiting["decided"] is False and waiting["slip"] is None
    (job,) = queue.deferred
    queue.run(*job)  # a worker takes the job
    found = api.get(f"/api/games/{game['id']}/analysis").json()
    assert found["decided"] and found["deal_winnable"] is False
    assert len(queue.deferred) == 1  # the stored answer: nothing queued again


def test_a_queue_out_of_reach_leaves_the_search_to_the_app(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    solver = solver_of(app)

    def unreachable(*args: Any) -> None:
        raise OSError("the queue's database is away")

    monkeypatch.setattr(solver, "analyse_later", unreachable)
    game = start(api, "castles-end", LOST_DEAL)
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    found = api.get(f"/api/games/{game['id']}/analysis").json()
    assert found["decided"] and found["deal_winnable"] is False
