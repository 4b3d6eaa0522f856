"""The skeleton every action that changes a game runs on (app/services/game_actions.py): the
owner check, Idempotency-Keys and their first answers, a move retried once on a lost
connection, and what follows the commit (the listeners of a game's end). Through the game
service on SQLite; a stand-in for the move store's transactions where a connection is lost."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace

import pytest
from sqlalchemy import func, select, update

from app.db.faults import Disconnected, OutcomeUnknown
from app.db.models import Game, MoveRecord
from app.db.move_store import MoveTransaction
from app.engine import Move, Status
from app.services.errors import (
    Forbidden,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    Unavailable,
)
from app.services.game_actions import MAX_IDEMPOTENCY_KEY
from app.services.game_views import GameView
from app.services.games import Games
from tests.aio import run
from tests.services.svc1_support import Db, open_db

SLUG, DEAL = "quadrangle", 5
QUIET = Move.parse("t4-t9")
OTHER = Move.parse("t10-t8")


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "game_actions")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


def answer(view: GameView) -> str:
    """Stands in for the web's JSON answer of a state."""
    return json.dumps({"id": view.record.id, "version": view.record.version})


def started(svc: Db, **options: object) -> tuple[Games, str, str]:
    games = svc.games(answer_json=answer, **options)
    me = svc.player()
    return games, me, games.start(me, SLUG, DEAL).record.id


def log_length(svc: Db, game_id: str) -> int:
    with svc.sessions() as db:
        return int(db.scalar(select(func.count()).where(MoveRecord.game_id == game_id)) or 0)


# -- who and which game ----------------------------------------------------------------------------


@pytest.mark.parametrize("game_id", ["no-such-game", "bad id\x00", "x" * 100])
def test_no_game_is_not_found(svc: Db, game_id: str) -> None:
    games, me, _ = started(svc)
    with pytest.raises(NotFound):
        games.move(game_id, me, QUIET, 0)
    with pytest.raises(NotFound):
        games.undo(game_id, me)
    with pytest.raises(NotFound):
        games.resign(game_id, me)


def test_only_the_owner_changes_a_game(svc: Db) -> None:
    games, me, game_id = started(svc)
    intruder = svc.player()
    acts: list[Callable[[str | None], object]] = [
        lambda who: games.move(game_id, who, QUIET, 0),
        lambda who: games.undo(game_id, who),
        lambda who: games.resign(game_id, who),
    ]
    for act in acts:
        with pytest.raises(Forbidden):
            act(intruder)
        with pytest.raises(Forbidden):
            act(None)  # nobody signed in
    assert games.get(game_id, me).record.version == 0 and log_length(svc, game_id) == 0


# -- Idempotency-Keys ------------------------------------------------------------------------------


def test_a_retried_move_gets_its_first_answer_and_is_applied_once(svc: Db) -> None:
    games, me, game_id = started(svc)
    first = games.move(game_id, me, QUIET, 0, idempotency_key="k1")
    assert first.stored == answer(first.view) and first.replayed is None
    again = games.move(game_id, me, QUIET, 0, idempotency_key="k1")
    assert again.replayed == first.stored
    assert again.view.record.version == 1 and log_length(svc, game_id) == 1


def test_a_key_used_for_another_request_is_refused(svc: Db) -> None:
    games, me, game_id = started(svc)
    games.move(game_id, me, QUIET, 0, idempotency_key="k1")
    with pytest.raises(IdempotencyKeyReused):
        games.move(game_id, me, OTHER, 1, idempotency_key="k1")  # another move
    with pytest.raises(IdempotencyKeyReused):
        games.undo(game_id, me, idempotency_key="k1")  # another action
    with pytest.raises(IdempotencyKeyReused):
        games.move(game_id, me, QUIET, 3, idempotency_key="k1")  # another version
    assert log_length(svc, game_id) == 1
    # A retried undo that leaves out the version is the same request.
    undone = games.undo(game_id, me, 1, idempotency_key="k2")
    assert games.undo(game_id, me, idempotency_key="k2").replayed == undone.stored
    assert log_length(svc, game_id) == 2


def test_an_action_without_a_key_stores_no_answer(svc: Db) -> None:
    games, me, game_id = started(svc)
    assert games.move(game_id, me, QUIET, 0).stored is None
    with svc.sessions() as db:
        stored = db.scalars(select(MoveRecord.response).where(MoveRecord.game_id == game_id))
        assert list(stored) == [None]


@pytest.mark.parametrize("length", [0, MAX_IDEMPOTENCY_KEY + 1])
def test_a_key_has_1_to_100_characters(svc: Db, length: int) -> None:
    games, me, game_id = started(svc)
    acts: list[Callable[[], object]] = [
        lambda: games.move(game_id, me, QUIET, 0, idempotency_key="k" * length),
        lambda: games.undo(game_id, me, idempotency_key="k" * length),
        lambda: games.resign(game_id, me, idempotency_key="k" * length),
    ]
    for act in acts:
        with pytest.raises(InvalidRequest, match="1 to 100 characters"):
            act()
    longest = games.move(game_id, me, QUIET, 0, idempotency_key="k" * MAX_IDEMPOTENCY_KEY)
    assert longest.view.record.version == 1


# -- a lost connection -----------------------------------------------------------------------------


def losing(
    real: Callable[[], AbstractContextManager[MoveTransaction]], failures: list[Exception]
) -> Callable[[], AbstractContextManager[MoveTransaction]]:
    """The move store's transactions, the first ones failing with ``failures`` in turn."""

    def transaction() -> AbstractContextManager[MoveTransaction]:
        if failures:
            raise failures.pop(0)
        return real()

    return transaction


def test_a_move_whose_connection_died_before_commit_is_sent_again_once(
    svc: Db, caplog: pytest.LogCaptureFixture
) -> None:
    games, me, game_id = started(svc)
    games.store = replace(svc.store, transaction=losing(svc.store.transaction, [Disconnected()]))
    with caplog.at_level(logging.WARNING, "patience_hall.games"):
        moved = games.move(game_id, me, QUIET, 0)
    assert moved.view.record.version == 1 and log_length(svc, game_id) == 1
    assert "move retried on a new connection" in caplog.text


def test_a_second_lost_connection_is_not_retried(svc: Db) -> None:
    games, me, game_id = started(svc)
    failures: list[Exception] = [Disconnected("one"), Disconnected("two"), Disconnected("three")]
    games.store = replace(svc.store, transaction=losing(svc.store.transaction, failures))
    with pytest.raises(Disconnected, match="two"):
        games.move(game_id, me, QUIET, 0)
    assert len(failures) == 1  # two attempts, no third
    assert log_length(svc, game_id) == 0


def test_a_move_whose_commit_may_have_happened_asks_for_a_retry_with_its_key(svc: Db) -> None:
    games, me, game_id = started(svc)
    failures: list[Exception] = [OutcomeUnknown("lost under COMMIT")]
    games.store = replace(svc.store, transaction=losing(svc.store.transaction, failures))
    with pytest.raises(Unavailable, match="same Idempotency-Key"):
        games.move(game_id, me, QUIET, 0, idempotency_key="k1")
    assert failures == []  # not retried: it may have been applied


def test_other_failures_are_not_retried(svc: Db) -> None:
    games, me, game_id = started(svc)
    failures: list[Exception] = [RuntimeError("a bug"), Disconnected()]
    games.store = replace(svc.store, transaction=losing(svc.store.transaction, failures))
    with pytest.raises(RuntimeError, match="a bug"):
        games.move(game_id, me, QUIET, 0)
    assert len(failures) == 1


# -- after the commit ------------------------------------------------------------------------------


def test_the_listeners_hear_of_a_games_end_after_it_is_written(svc: Db) -> None:
    ended: list[tuple[str, int, str]] = []
    competitions: list[str] = []

    def heard(game: str, deal: int) -> None:
        with svc.sessions() as db:  # committed: another connection reads the end
            status = db.scalar(select(Game.status).where(Game.id == game_id))
        ended.append((game, deal, str(status)))

    games, me, game_id = started(svc, ended=heard, competition_ended=competitions.append)
    games.move(game_id, me, QUIET, 0)
    games.undo(game_id, me)
    assert ended == []  # nothing ended yet
    games.resign(game_id, me)
    assert ended == [(SLUG, DEAL, Status.LOST)] and competitions == []


def test_a_competition_games_end_updates_its_event(svc: Db) -> None:
    competitions: list[str] = []
    games, me, game_id = started(svc, competition_ended=competitions.append)
    with svc.sessions.begin() as db:
        db.execute(update(Game).where(Game.id == game_id).values(competition="event"))
    games.move(game_id, me, QUIET, 0)
    assert competitions == []
    games.resign(game_id, me)
    assert competitions == [game_id]


def test_a_casual_game_publishes_no_race_events(svc: Db) -> None:
    published: list[list[int]] = []
    games, me, game_id = started(svc, publish=published.append)
    games.move(game_id, me, QUIET, 0)
    games.resign(game_id, me)
    assert published == []


def test_the_awaited_actions_are_the_same_actions(svc: Db) -> None:
    ended: list[tuple[str, int]] = []
    games, me, game_id = started(svc, ended=lambda game, deal: ended.append((game, deal)))
    moved = run(games.move_async(game_id, me, QUIET, 0, idempotency_key="a1"))
    assert moved.view.record.version == 1
    again = run(games.move_async(game_id, me, QUIET, 0, idempotency_key="a1"))
    assert again.replayed == moved.stored
    undone = run(games.undo_async(game_id, me, 1))
    assert undone.view.record.undos == 1 and undone.view.record.version == 2
    ended_view = run(games.resign_async(game_id, me, 2)).view
    assert ended_view.record.status == Status.LOST
    assert ended == [(SLUG, DEAL)]
    with pytest.raises(Forbidden):
        run(games.move_async(game_id, svc.player(), QUIET, 3))
