"""The solver as a service (app/services/solver.py): verdicts stored when games end and by
certification, the certified pool and its deals, and judging a deal off the move path. The
searches are faked where the service's own decisions are tested, real (Castle's End, a few
thousand positions) where the stored verdict must be the solver's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import delete, insert, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import GAME, GameRow
from app.db.models import CompetitionDeal, DealVerdict, Game, Player
from app.db.move_store import MoveStore
from app.engine import DEVELOPMENT_KEY, RULES_VERSION, Move
from app.services import solver as solver_module
from app.services.errors import InvalidRequest, NoCertifiedDeals, NoCertifiedDealsLeft
from app.services.games import Games
from app.services.players import create_player
from app.services.seal import Sealer
from app.services.solver import Solver
from app.services.solver_jobs import POOLS_SECONDS, Verdict, judge_deal
from app.solver import Outcome
from tests.aio import run
from tests.migrated import sqlite_sessions

NOW = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
SLUG = "castles-end"
LINE = (Move.parse("t1-f1"), Move.parse("t2-f1"))


class InlinePool:
    """Stands in for the worker pool: runs the job here, at once."""

    workers = 1

    def __init__(self) -> None:
        self.jobs: list[tuple[Any, ...]] = []

    async def run(self, timeout: float | None, fn: Callable[..., Any], *args: Any) -> Any:
        self.jobs.append(args)
        return fn(*args)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "solver") as sessions:
        yield sessions


@pytest.fixture()
def solver(database: sessionmaker[Session]) -> Iterator[Solver]:
    with database.begin() as db:
        for table in (CompetitionDeal, Game, DealVerdict, Player):
            db.execute(delete(table))
    store = MoveStore.open(database.kw["bind"])
    games = Games(database, DEVELOPMENT_KEY, store=store, sealer=Sealer(DEVELOPMENT_KEY))
    pool: Any = InlinePool()
    yield Solver(database, DEVELOPMENT_KEY, games, pool, judge_nodes=20_000, time_limits=False)
    store.close()


def verdict(deal: int, outcome: Outcome, line: tuple[Move, ...] = ()) -> Verdict:
    return Verdict(SLUG, deal, outcome, line, 100)


def row(solver: Solver, deal: int, slug: str = SLUG) -> DealVerdict | None:
    with solver.sessions() as db:
        return db.get(DealVerdict, (slug, deal))


def test_store_certifies_only_winnable_deals_with_their_par(solver: Solver) -> None:
    solver.store(verdict(1, Outcome.WINNABLE, LINE), certified=True)
    solver.store(verdict(2, Outcome.LOST), certified=True)
    solver.store(verdict(3, Outcome.WINNABLE, LINE), certified=False)
    one, two, three = row(solver, 1), row(solver, 2), row(solver, 3)
    assert one is not None and (one.certified, one.par, one.solution) == (True, 2, "t1-f1 t2-f1")
    assert two is not None and (two.certified, two.par, two.solution) == (False, None, None)
    assert three is not None and not three.certified
    assert solver.pool_size(SLUG) == 1 and solver.next_candidate(SLUG) == 2
    assert solver.solution(SLUG, 1) == ["t1-f1", "t2-f1"] and solver.solution(SLUG, 2) is None


def test_a_verdict_found_when_a_game_ended_never_replaces_a_decided_one(solver: Solver) -> None:
    solver.store(verdict(1, Outcome.LOST), certified=False)
    solver.store_judged(verdict(1, Outcome.WINNABLE, LINE))
    solver.store_judged(verdict(2, Outcome.UNKNOWN))
    solver.store_judged(verdict(2, Outcome.WINNABLE, LINE))  # a later search decided it
    solver.store_judged(verdict(2, Outcome.LOST))
    one, two = row(solver, 1), row(solver, 2)
    assert one is not None and one.outcome == "lost"
    assert two is not None and (two.outcome, two.par, two.certified) == ("winnable", 2, False)
    assert not solver.needs_verdict(SLUG, 1) and not solver.needs_verdict(SLUG, 2)
    solver.store_judged(verdict(3, Outcome.UNKNOWN))
    assert solver.needs_verdict(SLUG, 3) and solver.needs_verdict(SLUG, 4)


def test_certify_walks_deals_until_the_pool_holds_the_count(
    solver: Solver, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged: list[int] = []

    def fake_judge(slug: str, number: int, key: bytes, nodes: int, seconds: float) -> Verdict:
        judged.append(number)
        return verdict(number, Outcome.WINNABLE if number % 2 else Outcome.LOST, LINE)

    monkeypatch.setattr(solver_module, "judge_deal", fake_judge)
    solver.store(verdict(3, Outcome.LOST), certified=False)  # decided already: not searched
    steps: list[tuple[int, int]] = []
    have = solver.certify(SLUG, 3, progress=lambda h, c, v: steps.append((h, c)))
    # Odd deals are winnable; deal 3 was decided (lost) before: its stored verdict counts.
    assert have == 3 and judged == [1, 2, 4, 5, 6, 7]
    assert steps == [(0, 3), (1, 3), (1, 3), (1, 3), (1, 3), (2, 3), (2, 3), (3, 3)]
    with solver.sessions() as db:
        certified = db.scalars(select(DealVerdict.deal).where(DealVerdict.certified)).all()
    assert sorted(certified) == [1, 5, 7]
    # A second run resumes after the highest certified deal, and stops at max_deals.
    assert solver.certify(SLUG, 10, max_deals=2) == 4 and judged[-2:] == [8, 9]


def test_certify_stops_at_its_time(solver: Solver, monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(100))
    monkeypatch.setattr(
        solver_module, "judge_deal", lambda s, n, k, nodes, sec: verdict(n, Outcome.LOST)
    )
    have = solver.certify(SLUG, 5, max_seconds=3.5, clock=lambda: float(next(ticks)))
    assert have == 0 and row(solver, 2) is not None and row(solver, 3) is None


def test_certify_refuses_an_unknown_game(solver: Solver) -> None:
    with pytest.raises(InvalidRequest):
        solver.certify("no-such-game", 1)


def test_certified_games_are_read_again_once_this_process_certifies(solver: Solver) -> None:
    solver._pools = None
    assert solver.certified_games() == frozenset()
    solver.store(verdict(1, Outcome.WINNABLE, LINE), certified=False)
    assert solver.certified_games() == frozenset()  # a pool only grows: read a while ago
    solver.store(verdict(2, Outcome.WINNABLE, LINE), certified=True)
    assert solver.certified_games() == frozenset({SLUG})


def player(solver: Solver, name: str) -> str:
    with solver.sessions.begin() as db:
        return create_player(db, name)[0].id


def test_a_winnable_deal_is_one_the_player_never_had_nor_anyone_claimed(solver: Solver) -> None:
    ann = player(solver, "ann")
    for deal in (1, 2, 5):
        solver.store(verdict(deal, Outcome.WINNABLE, LINE), certified=True)
    with solver.sessions.begin() as db:
        game = GameRow.dealt("mine-1", ann, SLUG, 1, "{}", "lost", NOW, rules=RULES_VERSION,
                             rated=False)  # fmt: skip
        db.execute(insert(GAME).values(**vars(game)))
        db.add(CompetitionDeal(game=SLUG, deal=5, kind="event", player_id=ann,
                               sealed_until=NOW, created_at=NOW))  # fmt: skip
    view = solver.start_winnable(ann, SLUG)
    assert (view.record.deal, view.record.rated) == (2, False)
    with pytest.raises(NoCertifiedDealsLeft):
        solver.start_winnable(ann, SLUG)


def test_no_pool_no_winnable_deal(solver: Solver) -> None:
    ann = player(solver, "ann")
    with pytest.raises(NoCertifiedDeals) as empty:
        solver.start_winnable(ann, "quadruple-interchange")
    assert "rarely decides" in empty.value.message  # its own words for the game
    with pytest.raises(NoCertifiedDeals):
        solver.start_winnable(ann, SLUG)
    with pytest.raises(InvalidRequest):
        solver.start_winnable(ann, "no-such-game")


def test_judging_an_ended_games_deal_stores_the_solvers_verdict(solver: Solver) -> None:
    found = run(solver.judge_ended(SLUG, 3))
    assert found is not None and found.outcome is Outcome.LOST
    stored = row(solver, 3)
    assert stored is not None and stored.outcome == "lost" and not stored.certified
    assert run(solver.judge_ended(SLUG, 3)) is None  # judged before: nothing searched
    assert solver._judging == set()
    expected = judge_deal(SLUG, 1, DEVELOPMENT_KEY, 20_000)
    assert run(solver.judge_ended(SLUG, 1)) == expected


def test_a_failed_judging_is_logged_and_forgotten(
    solver: Solver, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any) -> Verdict:
        raise RuntimeError("the worker died")

    monkeypatch.setattr(solver_module, "judge_deal", broken)
    with caplog.at_level(logging.ERROR, "app.services.solver"):
        assert run(solver.judge_ended(SLUG, 1)) is None
    assert "judging castles-end deal 1 failed" in caplog.text
    assert solver._judging == set() and row(solver, 1) is None


def test_an_ended_game_goes_to_the_job_queue_when_there_is_one(
    solver: Solver, caplog: pytest.LogCaptureFixture
) -> None:
    queued: list[tuple[str, int]] = []
    solver.judge_later = lambda slug, deal: queued.append((slug, deal))
    solver.game_ended(SLUG, 7)
    assert queued == [(SLUG, 7)]

    def down(slug: str, deal: int) -> None:
        raise ConnectionError("queue away")

    solver.judge_later = down
    with caplog.at_level(logging.WARNING, "app.services.solver"):
        solver.game_ended(SLUG, 8)  # the game's end is committed: never raised to the player
    assert "queueing castles-end deal 8 to be judged failed" in caplog.text


def test_judging_starts_only_when_the_service_is_free(solver: Solver) -> None:
    async def scenario() -> list[tuple[str, int]]:
        solver.judge_busy_share = 0.5
        solver.busy.now = lambda: 0.9  # type: ignore[method-assign]  # busy serving play
        solver._start_judging(SLUG, 3)
        busy = len(solver._tasks)
        solver.busy.now = lambda: 0.1  # type: ignore[method-assign]
        solver._start_judging(SLUG, 3)
        solver._start_judging(SLUG, 1)  # one worker: no backlog behind the first
        started = list(solver._judging)
        await asyncio.gather(*solver._tasks)
        assert busy == 0
        return started

    assert run(scenario()) == [(SLUG, 3)]
    stored = row(solver, 3)
    assert stored is not None and row(solver, 1) is None


def test_with_the_database_away_the_pools_last_read_are_offered(
    solver: Solver, caplog: pytest.LogCaptureFixture
) -> None:
    solver.store(verdict(1, Outcome.WINNABLE, LINE), certified=True)
    assert solver.certified_games() == frozenset({SLUG})

    def away() -> Session:
        raise OperationalError("SELECT", {}, ConnectionRefusedError("the database is down"))

    solver.sessions = away  # type: ignore[assignment]
    read_at, games = solver._pools or (0.0, frozenset())
    solver._pools = (read_at - POOLS_SECONDS, games)  # read long ago: read again
    with caplog.at_level(logging.WARNING, "app.services.solver"):
        assert solver.certified_games() == frozenset({SLUG})  # the home page still opens
    assert "certified pools not read" in caplog.text
    solver._pools = None
    assert solver.certified_games() == frozenset()  # never read: none offered
