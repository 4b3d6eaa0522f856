"""What a move, an undo and a resignation check and change (app/services/game_policies.py):
versions, illegal and malformed moves, the move cap, a race's start, undoable steps, clean
competition games, and the clock of active time. Through the game service on SQLite, with a
clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.db.models import Game
from app.engine import Move, Status
from app.services.errors import (
    GameOver,
    IllegalMoveError,
    InvalidRequest,
    NotInChallenge,
    RaceNotStarted,
    StaleVersion,
    UndoUnavailable,
)
from app.services.games import Games
from tests.services.svc1_support import Db, open_db

SLUG, DEAL = "quadrangle", 5
DEAL_MOVE = Move.parse("stock-waste")  # turns up a card nobody had seen
QUIET = Move.parse("t4-t9")  # reveals nothing (Quadrangle's tableau is face up)


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "game_policies")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


def started(svc: Db, **options: int) -> tuple[Games, str, str]:
    games = svc.games(**options)
    me = svc.player()
    return games, me, games.start(me, SLUG, DEAL).record.id


def set_row(svc: Db, game_id: str, **values: object) -> None:
    with svc.sessions.begin() as db:
        db.execute(update(Game).where(Game.id == game_id).values(**values))


def tableau_move(games: Games, player: str, game_id: str) -> Move:
    """A legal move between tableau piles (it reveals nothing)."""
    legal = games.get(game_id, player).legal_moves
    return next(m for m in legal if m.source.startswith("t") and m.target.startswith("t"))


# -- moves -----------------------------------------------------------------------------------------


def test_a_move_advances_the_version_and_keeps_the_new_state(svc: Db) -> None:
    games, me, game_id = started(svc)
    moved = games.move(game_id, me, QUIET, 0).view
    assert (moved.record.version, moved.record.moves) == (1, 1)
    assert moved.record.can_undo and moved.record.status == Status.PLAYING
    assert moved.step is not None and str(moved.step.move) == "t4-t9"
    assert games.get(game_id, me).state == moved.state == moved.step.after
    assert moved.record.first_move_at == svc.clock.at


def test_a_move_on_a_board_that_has_changed_is_refused(svc: Db) -> None:
    games, me, game_id = started(svc)
    games.move(game_id, me, QUIET, 0)
    with pytest.raises(StaleVersion) as refused:
        games.move(game_id, me, DEAL_MOVE, 0)
    assert refused.value.params == {"version": 0, "now": 1}
    assert games.get(game_id, me).record.version == 1


def test_an_illegal_move_is_refused_with_the_engines_reason(svc: Db) -> None:
    games, me, game_id = started(svc)
    with pytest.raises(IllegalMoveError) as refused:
        games.move(game_id, me, Move.parse("t1-t1"), 0)
    assert refused.value.words is not None and refused.value.words.code == "same_pile"
    with pytest.raises(InvalidRequest) as malformed:
        games.move(game_id, me, Move("zz", "t1", 1), 0)
    assert malformed.value.words is not None and malformed.value.words.code == "no_such_pile"
    record = games.get(game_id, me).record
    assert (record.version, record.moves, record.first_move_at) == (0, 0, None)


def test_the_move_cap_ends_the_game_as_lost(svc: Db) -> None:
    games, me, game_id = started(svc, max_moves=2)
    games.move(game_id, me, QUIET, 0)
    last = games.move(game_id, me, DEAL_MOVE, 1).view
    assert last.record.status == Status.LOST and last.legal_moves == []
    assert last.move_limit_reached and last.record.finished_at == svc.clock.at
    with pytest.raises(GameOver, match="limit of 2 moves"):
        games.move(game_id, me, QUIET, 2)


def test_a_finished_game_takes_no_move(svc: Db) -> None:
    games, me, game_id = started(svc)
    games.resign(game_id, me)
    with pytest.raises(GameOver) as refused:
        games.move(game_id, me, QUIET, 1)
    assert refused.value.params == {"status": "lost"}


def test_a_race_game_takes_no_move_before_the_start(svc: Db) -> None:
    games, me, game_id = started(svc)
    set_row(svc, game_id, not_before=svc.clock.at + timedelta(seconds=3))
    with pytest.raises(RaceNotStarted):
        games.move(game_id, me, QUIET, 0)
    svc.clock.move(seconds=3)
    assert games.move(game_id, me, QUIET, 0).view.record.version == 1


# -- the clock of active time ----------------------------------------------------------------------


def test_active_time_counts_pauses_up_to_the_idle_cap_from_the_first_move(svc: Db) -> None:
    games, me, game_id = started(svc, idle_cap_ms=60_000)
    svc.clock.move(minutes=30)  # looking at the deal before the first move: not counted
    games.move(game_id, me, QUIET, 0)
    svc.clock.move(seconds=4, milliseconds=500)
    games.move(game_id, me, DEAL_MOVE, 1)
    assert svc.games().get(game_id, me).record.active_ms == 4_500
    svc.clock.move(hours=2)  # away for two hours: counted as the cap
    games.move(game_id, me, tableau_move(games, me, game_id), 2)
    record = games.get(game_id, me).record
    assert record.active_ms == 4_500 + 60_000
    assert record.duration_ms is None  # set when the game ends
    svc.clock.move(seconds=1)
    ended = games.resign(game_id, me).view.record
    assert ended.active_ms == ended.duration_ms == 65_500
    assert ended.finished_at == ended.updated_at == svc.clock.at


def test_a_game_ended_before_its_first_move_has_no_duration(svc: Db) -> None:
    games, me, game_id = started(svc)
    svc.clock.move(minutes=5)
    ended = games.resign(game_id, me).view.record
    assert ended.status == Status.LOST and ended.duration_ms is None and ended.active_ms == 0


# -- undo ------------------------------------------------------------------------------------------


def test_an_undo_takes_back_the_latest_move(svc: Db) -> None:
    games, me, game_id = started(svc)
    dealt = games.get(game_id, me)
    games.move(game_id, me, QUIET, 0)
    undone = games.undo(game_id, me, 1).view
    assert undone.state == dealt.state
    assert (undone.record.version, undone.record.moves, undone.record.undos) == (2, 1, 1)
    assert not undone.record.can_undo  # nothing left to take back
    assert undone.step is not None and str(undone.step.move) == "t4-t9"
    assert set(undone.step.changed) == {"t4", "t9"}
    with pytest.raises(UndoUnavailable, match="no move to undo"):
        games.undo(game_id, me)


def test_a_move_that_turned_up_a_card_cannot_be_undone(svc: Db) -> None:
    games, me, game_id = started(svc)
    games.move(game_id, me, QUIET, 0)
    moved = games.move(game_id, me, DEAL_MOVE, 1).view
    assert not moved.record.can_undo
    with pytest.raises(UndoUnavailable, match="turned up a card"):
        games.undo(game_id, me)
    assert games.get(game_id, me).record.version == 2


def test_an_undo_checks_the_version_and_the_game(svc: Db) -> None:
    games, me, game_id = started(svc)
    games.move(game_id, me, QUIET, 0)
    with pytest.raises(StaleVersion):
        games.undo(game_id, me, 0)
    set_row(svc, game_id, competition="challenge")
    with pytest.raises(NotInChallenge):
        games.undo(game_id, me, 1)
    set_row(svc, game_id, competition=None)
    games.resign(game_id, me)
    with pytest.raises(UndoUnavailable, match="game is over"):
        games.undo(game_id, me)


# -- resign ----------------------------------------------------------------------------------------


def test_a_resignation_ends_the_game_once(svc: Db) -> None:
    games, me, game_id = started(svc)
    games.move(game_id, me, QUIET, 0)
    with pytest.raises(StaleVersion):
        games.resign(game_id, me, 0)
    ended = games.resign(game_id, me, 1).view
    assert ended.record.status == Status.LOST and ended.record.version == 2
    assert ended.finished and ended.log == ["t4-t9"]
    with pytest.raises(GameOver, match="already over"):
        games.resign(game_id, me)
