"""The ``game`` row as plain data and the move path's statements (app/db/game_rows.py): a dealt
row, the parameters of each statement, and the statements themselves on a migrated SQLite
database. The transaction that runs them: test_move_store.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, Engine, insert, select
from sqlalchemy.exc import IntegrityError

from app.db.game_rows import (
    EVENT,
    FIRST_RESPONSE,
    GAME,
    INSERT_EVENT,
    INSERT_MOVE,
    LOCK_GAME,
    LOCKED_COLUMNS,
    MOVE_LOG,
    MUTABLE,
    SELECT_GAME,
    SNAPSHOT,
    UPDATE_GAME,
    FirstAnswer,
    GameRow,
    NewEvent,
    game_values,
    locked_game,
    move_values,
)
from app.db.models import Player
from app.db.session import make_engine
from tests.migrated import migrated_sqlite

DEALT = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def _row(game_id: str = "g1", **changes: object) -> GameRow:
    row = GameRow.dealt(
        game_id, "p1", "corners", 7, '{"s": 0}', "playing", DEALT, rules="3", rated=True
    )
    for name, value in changes.items():
        setattr(row, name, value)
    return row


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = make_engine(migrated_sqlite(tmp_path_factory, "game_rows"))
    with engine.begin() as db:
        db.execute(insert(Player).values(id="p1", name="Ada", name_key="ada", created_at=DEALT))
    yield engine
    engine.dispose()


@pytest.fixture()
def db(engine: Engine) -> Iterator[Connection]:
    """A connection whose work is rolled back after the test."""
    with engine.connect() as db:
        db.begin()
        yield db
        db.rollback()


def test_a_dealt_game_starts_at_version_zero_with_nothing_played() -> None:
    row = _row()
    assert (row.version, row.moves, row.undos, row.can_undo, row.active_ms) == (0, 0, 0, False, 0)
    assert row.created_at == row.updated_at == DEALT
    assert (row.first_move_at, row.finished_at, row.duration_ms) == (None, None, None)
    assert (row.race_id, row.not_before, row.competition) == (None, None, None)
    raced = GameRow.dealt(
        "g2", "p1", "corners", 7, "{}", "playing", DEALT, rules="3", rated=False,
        race_id=4, not_before=DEALT + timedelta(seconds=5), competition="event",
    )  # fmt: skip
    assert (raced.race_id, raced.not_before, raced.competition, raced.rated) == (
        4, DEALT + timedelta(seconds=5), "event", False,
    )  # fmt: skip


def test_the_statements_parameters_come_from_the_row() -> None:
    row = _row(version=3, moves=3, state="after")
    values = game_values(row)
    assert set(values) == {"game_id", *MUTABLE}
    assert values["game_id"] == "g1" and values["version"] == 3 and values["state"] == "after"
    assert "player_id" not in values and "deal" not in values  # a game's deal never changes
    move = move_values(row, "move", DEALT, notation="t1-f", idempotency_key="k")
    assert move == {
        "game_id": "g1", "seq": 3, "action": "move", "created_at": DEALT, "notation": "t1-f",
        "revealed": False, "idempotency_key": "k", "response": None, "snapshot": None,
    }  # fmt: skip
    event = NewEvent("ROOMAA", "progress", '{"moves": 3}', DEALT)
    assert event.values() == {
        "event_room": "ROOMAA", "event_kind": "progress", "event_data": '{"moves": 3}',
        "event_at": DEALT,
    }  # fmt: skip
    # The move's and the event's parameters share one dict on PostgreSQL: no name in common.
    assert not set(move) & set(event.values()) and not set(move) & set(MUTABLE)


def test_the_locked_read_has_every_field_of_the_row_and_the_players_name() -> None:
    assert [f.name for f in fields(GameRow)] + ["player_name"] == LOCKED_COLUMNS
    assert [c.key for c in SELECT_GAME.selected_columns] == LOCKED_COLUMNS
    assert set(MUTABLE) <= {f.name for f in fields(GameRow)}


def test_an_earlier_request_is_the_same_when_action_notation_and_version_agree() -> None:
    first = FirstAnswer('{"version": 5}', "move", "t1-f", 5)  # the move that made version 5
    assert first.same_request("move", "t1-f", 4)
    assert first.same_request("move", "t1-f", None)  # a retry that did not say its version
    assert not first.same_request("move", "t1-f", 5)
    assert not first.same_request("move", "t2-f", 4)
    assert not first.same_request("undo", None, 4)


def test_a_locked_game_is_built_from_the_selected_values() -> None:
    values = {**vars(_row()), "player_name": "Ada"}
    locked = locked_game(dict(values), None)
    assert locked.row == _row() and locked.player_name == "Ada" and locked.first is None
    again = locked_game(dict(values), ("{}", "move", "t1-f", "5"))
    assert again.first == FirstAnswer("{}", "move", "t1-f", 5)


def test_the_statements_play_a_move_on_sqlite(db: Connection) -> None:
    row = _row()
    db.execute(insert(GAME).values(**vars(row)))
    found = db.execute(SELECT_GAME, {"game_id": "g1"}).one()
    locked = locked_game(dict(found._mapping), None)
    assert locked.row == row and locked.player_name == "Ada"
    assert db.execute(LOCK_GAME, {"game_id": "elsewhere"}).first() is None

    played = _row(version=1, moves=1, state="after", first_move_at=DEALT, can_undo=True)
    db.execute(UPDATE_GAME, game_values(played))
    first_move = move_values(played, "move", DEALT, notation="t1-f", idempotency_key="k")
    db.execute(INSERT_MOVE, first_move)
    again = locked_game(dict(db.execute(LOCK_GAME, {"game_id": "g1"}).one()._mapping), None)
    assert again.row == played
    first = db.execute(FIRST_RESPONSE, {"game_id": "g1", "key": "k"}).one()
    assert tuple(first) == (None, "move", "t1-f", 1)
    assert db.execute(FIRST_RESPONSE, {"game_id": "g1", "key": "other"}).first() is None
    assert db.execute(MOVE_LOG, {"game_id": "g1"}).all() == [(1, "move", "t1-f", False)]
    assert db.execute(SNAPSHOT, {"game_id": "g1", "seq": 1}).scalar_one() is None


def test_a_version_is_written_once(db: Connection) -> None:
    row = _row()
    db.execute(insert(GAME).values(**vars(row)))
    played = _row(version=1)
    db.execute(INSERT_MOVE, move_values(played, "move", DEALT, notation="t1-f"))
    # Two writers of version 1: the log refuses the second.
    with pytest.raises(IntegrityError), db.begin_nested():
        db.execute(INSERT_MOVE, move_values(played, "move", DEALT, notation="t2-f"))
    assert db.execute(MOVE_LOG, {"game_id": "g1"}).all() == [(1, "move", "t1-f", False)]


def test_a_race_progress_event_is_inserted_with_its_own_parameters(db: Connection) -> None:
    event = NewEvent("ROOMAA", "progress", '{"moves": 1}', DEALT)
    event_id = db.execute(INSERT_EVENT.returning(EVENT.c.id), event.values()).scalar_one()
    stored = db.execute(
        select(EVENT.c.room_code, EVENT.c.kind, EVENT.c.data, EVENT.c.created_at).where(
            EVENT.c.id == event_id
        )
    ).one()
    assert tuple(stored) == ("ROOMAA", "progress", '{"moves": 1}', DEALT)
