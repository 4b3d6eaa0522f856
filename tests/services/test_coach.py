"""The coach (app/services/coach.py): who may have a hint, hints counted (a rated game becomes
casual), a winning line kept with the game and followed without a search, what a busy solver
gives, and the analysis of a finished game stored, searched or queued. On SQLite, with a
stand-in for the solver's worker pool that answers what the test says (the searches themselves
are tests/solver's)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from sqlalchemy import insert, select, update

from app.db.models import DealVerdict, Game, GameCoach, GameHint
from app.engine import Move, Status, Words, dumps, get_ruleset, loads
from app.services import coach as coach_module
from app.services.coach import Coach
from app.services.errors import (
    Forbidden,
    GameOver,
    HintsOffInRaces,
    InvalidRequest,
    NoSlip,
    NotFound,
    NotInChallenge,
)
from app.services.hint_views import HintView
from app.services.solver_pool import SolverPool
from tests.aio import run
from tests.services.svc1_support import KEY, Db, open_db, start_rated

SLUG, DEAL = "quadrangle", 5  # has a stock: cards are hidden
QUIET = Move.parse("t4-t9")


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "coach")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


class Pool:
    """Stands in for the solver's worker pool: each run answers the next of ``answers`` (None:
    no worker answered in time) and records what it was asked."""

    def __init__(self, *answers: dict[str, Any] | None) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    async def run(self, timeout: float | None, fn: Callable[..., Any], *args: Any) -> Any:
        self.asked.append((fn, args))
        return self.answers.pop(0)


def coach(svc: Db, pool: Pool | None = None, **options: Any) -> Coach:
    return Coach(svc.sessions, KEY, svc.games(), cast(SolverPool, pool or Pool()), **options)


def started(svc: Db, slug: str = SLUG, deal: int = DEAL) -> tuple[str, str]:
    me = svc.player()
    return me, svc.games().start(me, slug, deal).record.id


def set_row(svc: Db, game_id: str, **values: object) -> None:
    with svc.sessions.begin() as db:
        db.execute(update(Game).where(Game.id == game_id).values(**values))


def hint_answer(move: Move | None, line: list[str], **more: Any) -> dict[str, Any]:
    """A worker's hint as app/services/solver_jobs.py ``hint_job`` answers."""
    return {
        "move": None if move is None else {"from": move.source, "to": move.target, "count": 1},
        "outcome": "winnable", "exact": True, "message": "This position can be won.",
        "chance": None, "words": [], "line": line,
    } | more  # fmt: skip


def line_from(svc: Db, game_id: str, me: str, length: int) -> list[str]:
    """Legal moves from the game's position, as a kept line would be."""
    state = svc.games().get(game_id, me).state
    rules = get_ruleset(SLUG)
    line: list[str] = []
    for _ in range(length):
        move = rules.legal_moves(state)[0]
        line.append(str(move))
        state = rules.apply(state, move)
    return line


# -- who may have a hint ---------------------------------------------------------------------------


def test_the_owner_gets_the_position_of_a_game_in_play(svc: Db) -> None:
    me, game_id = started(svc)
    svc.games().move(game_id, me, QUIET, 0)
    state, version = coach(svc).hint_position(game_id, me)
    assert version == 1 and loads(state) == svc.games().get(game_id, me).state


def test_hints_are_refused_for_others_finished_games_races_and_challenges(svc: Db) -> None:
    me, game_id = started(svc)
    service = coach(svc)
    with pytest.raises(NotFound):
        service.hint_position("not a game id", me)
    with pytest.raises(Forbidden):
        service.hint_position(game_id, svc.player())
    set_row(svc, game_id, race_id=42)
    with pytest.raises(HintsOffInRaces):
        service.hint_position(game_id, me)
    set_row(svc, game_id, race_id=None, competition="challenge")
    with pytest.raises(NotInChallenge):
        service.hint_position(game_id, me)
    set_row(svc, game_id, competition=None)
    svc.games().resign(game_id, me)
    with pytest.raises(GameOver):
        service.hint_position(game_id, me)


# -- counting hints --------------------------------------------------------------------------------


def test_hints_are_counted_and_a_rated_game_becomes_casual(svc: Db) -> None:
    me = svc.player()
    game_id = start_rated(svc.games(), me, SLUG, 4_294_967_301).record.id
    service = coach(svc)
    assert service.hints_used(game_id) == 0
    assert service.record_hint(game_id) == 1
    assert service.record_hint(game_id) == 2
    assert service.hints_used(game_id) == 2
    with svc.sessions() as db:
        assert db.scalar(select(Game.rated).where(Game.id == game_id)) is False


# -- hints and kept lines --------------------------------------------------------------------------


def test_a_winning_line_found_is_kept_and_followed_without_a_search(svc: Db) -> None:
    me, game_id = started(svc)
    line = line_from(svc, game_id, me, 3)
    pool = Pool(hint_answer(Move.parse(line[0]), line))
    service = coach(svc, pool)
    first = run(service.hint(game_id, me))
    assert str(first.move) == line[0] and first.exact and first.hints_used == 1
    assert first.version == 0 and len(pool.asked) == 1
    with svc.sessions() as db:
        kept = db.get(GameCoach, game_id)
        assert kept is not None and kept.line == " ".join(line)
    svc.games().move(game_id, me, Move.parse(line[0]), 0)
    second = run(service.hint(game_id, me))  # on the line: its next move, no search
    assert str(second.move) == line[1] and second.outcome == "winnable" and second.exact
    assert (second.version, second.hints_used) == (1, 2)
    assert len(pool.asked) == 1


def test_a_player_who_leaves_the_line_gets_a_new_search(svc: Db) -> None:
    me, game_id = started(svc)
    line = line_from(svc, game_id, me, 3)
    service = coach(svc)
    state, _ = service.hint_position(game_id, me)
    service.keep_line(game_id, state, line)
    assert str(cast(Any, service.kept_line(game_id, state)).move) == line[0]
    off = next(m for m in svc.games().get(game_id, me).legal_moves if str(m) != line[0])
    moved = svc.games().move(game_id, me, off, 0).view
    assert service.kept_line(game_id, dumps(moved.state)) is None
    # A line that no longer reads (an older engine's) is searched again too.
    with svc.sessions.begin() as db:
        db.execute(update(GameCoach).values(line="not a move"))
    assert service.kept_line(game_id, state) is None
    assert service.kept_line("no-such-game", state) is None


def test_a_busy_solver_gives_no_hint_and_counts_none(svc: Db) -> None:
    me, game_id = started(svc, "castles-end", 1)  # nothing hidden: no estimate to give
    run(coach(svc, Pool(None)).hint(game_id, me))
    given = run(coach(svc, Pool(None)).hint(game_id, me))  # twice: neither counted
    assert given.move is None and given.outcome == "unknown" and not given.exact
    assert "busy" in given.message and given.hints_used == 0
    with svc.sessions() as db:
        assert db.scalar(select(GameHint.hints)) is None


def test_a_solver_worker_killed_gives_the_busy_answer_not_an_error(svc: Db) -> None:
    """The real pool, its one worker killed (``kill -9``, as the out-of-memory killer does):
    the hint is the busy answer, and the next hint is searched by a new worker."""
    me, game_id = started(svc, "castles-end", 1)  # nothing hidden: no estimate to give
    pool = SolverPool(1, idle=False)

    async def kill_then_hint() -> tuple[HintView, HintView]:
        try:
            pid = await pool.run(30, os.getpid)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            # Positions alone bound the searches: nothing here depends on the machine's speed.
            given = await coach(svc, cast(Pool, pool), time_limits=False).hint(game_id, me)
            return given, await coach(svc, cast(Pool, pool), time_limits=False).hint(game_id, me)
        finally:
            pool.close()

    given, after = run(kill_then_hint())
    assert given.move is None and given.outcome == "unknown" and "busy" in given.message
    assert after.exact and "busy" not in after.message  # a new worker searched it


def test_a_busy_solver_gives_a_quick_estimate_where_cards_are_hidden(
    svc: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    me, game_id = started(svc)
    estimate = Words("estimate", "Won in %(share)s of arrangements.", {"share": "60%"})
    quick: list[tuple[Any, ...]] = []

    def quick_estimate(*args: Any) -> dict[str, Any]:
        quick.append(args)
        return hint_answer(QUIET, [], outcome="estimate", exact=False, chance=0.6,
                           message="Won in 60% of arrangements.", words=[estimate])  # fmt: skip

    monkeypatch.setattr(coach_module, "hint_job", quick_estimate)
    given = run(coach(svc, Pool(None)).hint(game_id, me))
    assert len(quick) == 1
    assert given.move == QUIET and given.chance == 0.6 and given.hints_used == 1
    assert [w.code for w in given.words] == ["busy_estimate", "estimate"]
    assert given.message == "The solver is busy: a quick estimate. Won in 60% of arrangements."


# -- analysis --------------------------------------------------------------------------------------


def finished(svc: Db) -> tuple[str, str]:
    me, game_id = started(svc)
    games = svc.games()
    games.move(game_id, me, QUIET, 0)
    games.resign(game_id, me)
    return me, game_id


def test_a_stored_analysis_is_given_without_a_search(svc: Db) -> None:
    me, game_id = finished(svc)
    pool = Pool()
    service = coach(svc, pool)
    stored = {"deal_winnable": True, "slip": None, "knowing": "all", "decided": True}
    service.store_analysis(game_id, stored)
    assert run(service.analysis(game_id, me)) == stored
    assert pool.asked == []


def test_a_deal_proved_lost_needs_no_search(svc: Db) -> None:
    me, game_id = finished(svc)
    with svc.sessions.begin() as db:
        db.execute(
            insert(DealVerdict).values(
                game=SLUG, deal=DEAL, outcome="lost", positions=1, certified=False,
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )  # fmt: skip
    pool = Pool()
    service = coach(svc, pool)
    found = run(service.analysis(game_id, me))
    assert found["deal_winnable"] is False and found["decided"] and pool.asked == []
    assert service.stored_analysis(game_id) == found


def test_a_decided_search_is_stored_and_an_undecided_one_is_not(svc: Db) -> None:
    me, game_id = finished(svc)
    decided = {"deal_winnable": True, "slip": {"ply": 1}, "knowing": "all", "decided": True}
    pool = Pool(None, decided)
    service = coach(svc, pool)
    undecided = run(service.analysis(game_id, me))
    assert undecided["decided"] is False and service.stored_analysis(game_id) is None
    assert run(service.analysis(game_id, me)) == decided
    assert service.stored_analysis(game_id) == decided
    _, args = pool.asked[0]
    assert args[:4] == (SLUG, DEAL, KEY, ["t4-t9"])  # the deal and the moves in force


def test_a_queued_analysis_is_waited_for_and_a_failed_queue_searches_here(svc: Db) -> None:
    me, game_id = finished(svc)
    queued: list[tuple[str, str, int, list[str]]] = []
    waiting = coach(
        svc, Pool(), analyse_later=lambda *job: queued.append(job), analysis_wait_seconds=0
    )
    answer = run(waiting.analysis(game_id, me))
    assert queued == [(game_id, SLUG, DEAL, ["t4-t9"])]
    assert answer["decided"] is False  # not stored within the wait: undecided for now

    def unreachable(*job: object) -> None:
        raise ConnectionError("the queue is away")

    decided = {"deal_winnable": True, "slip": None, "knowing": "all", "decided": True}
    pool = Pool(decided)
    here = coach(svc, pool, analyse_later=unreachable, analysis_wait_seconds=0)
    assert run(here.analysis(game_id, me)) == decided and len(pool.asked) == 1


def test_try_again_needs_a_slip_and_replays_to_just_before_it(svc: Db) -> None:
    me, game_id = started(svc)
    line = line_from(svc, game_id, me, 3)
    games = svc.games()
    for version, text in enumerate(line):
        games.move(game_id, me, Move.parse(text), version)
    games.resign(game_id, me)
    service = coach(svc)
    service.store_analysis(game_id, {"deal_winnable": True, "slip": None, "decided": True})
    with pytest.raises(NoSlip):
        run(service.try_again(game_id, me))
    service.store_analysis(game_id, {"deal_winnable": True, "slip": {"ply": 3}, "decided": True})
    again = run(service.try_again(game_id, me))
    assert again.record.id != game_id and again.record.deal == DEAL and not again.record.rated
    assert again.record.status == Status.PLAYING and again.record.moves == 2
    rules = get_ruleset(SLUG)
    expected = rules.replay(rules.deal(DEAL, KEY), [Move.parse(m) for m in line[:2]])
    assert again.state == expected


def test_the_slips_words_name_the_move_played_and_the_better_one(svc: Db) -> None:
    me, game_id = finished(svc)
    service = coach(svc)
    rules = get_ruleset(SLUG)
    better = next(str(m) for m in rules.legal_moves(rules.deal(DEAL, KEY)) if m != QUIET)
    played, instead = service.slip_words(game_id, me, 1, better)
    assert isinstance(played, Words) and isinstance(instead, Words)
    assert played != instead
    for ply in (0, 2):
        with pytest.raises(InvalidRequest):
            service.slip_words(game_id, me, ply, better)


def test_a_workers_analysis_job_is_done_once(svc: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    _, game_id = finished(svc)
    jobs: list[tuple[Any, ...]] = []
    answers: Iterator[dict[str, Any]] = iter([{"decided": False}, {"decided": True, "slip": None}])

    def job(*args: Any) -> dict[str, Any]:
        jobs.append(args)
        return next(answers)

    monkeypatch.setattr(coach_module, "analysis_job", job)
    service = coach(svc)
    assert not service.analyse_now(game_id, SLUG, DEAL, ["t4-t9"])
    assert service.stored_analysis(game_id) is None
    assert service.analyse_now(game_id, SLUG, DEAL, ["t4-t9"])
    assert service.analyse_now(game_id, SLUG, DEAL, ["t4-t9"])  # stored: not searched again
    assert len(jobs) == 2 and jobs[0][:4] == (SLUG, DEAL, KEY, ["t4-t9"])
