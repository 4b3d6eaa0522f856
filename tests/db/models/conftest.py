"""The models' tests: a migrated SQLite database per module, and per test a session whose work
is rolled back, with a player and a game to refer to."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.models import Base, Game, Player
from app.db.session import make_engine
from tests.migrated import migrated_sqlite

AT = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = make_engine(migrated_sqlite(tmp_path_factory, "models"))
    yield engine
    engine.dispose()


def player(player_id: str = "p1", name: str = "Ada") -> Player:
    return Player(id=player_id, name=name, name_key=name.lower(), created_at=AT)


def game(game_id: str = "g1", player_id: str = "p1", **values: object) -> Game:
    fields: dict[str, object] = {
        "game": "corners", "deal": 7, "rules": "3", "state": "{}", "status": "playing",
        "created_at": AT, "updated_at": AT, **values,
    }  # fmt: skip
    return Game(id=game_id, player_id=player_id, **fields)


@pytest.fixture()
def session(engine: Engine) -> Iterator[Session]:
    """A session holding player p1 and their game g1; everything is rolled back after."""
    with engine.connect() as db:
        db.begin()
        with Session(bind=db, join_transaction_mode="create_savepoint") as session:
            session.add(player())
            session.flush()
            session.add(game())
            session.flush()
            yield session
        db.rollback()


def refused(session: Session, model: type[Base], **values: object) -> str:
    """Inserts a row the table must refuse; returns the database's reason. (Core, in a
    savepoint: the session stays usable and holds no half-made object.)"""
    with pytest.raises(IntegrityError) as refusal, session.begin_nested():
        session.execute(insert(model).values(**values))
    return str(refusal.value.orig)
