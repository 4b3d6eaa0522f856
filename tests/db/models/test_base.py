"""The declarative base (app/db/models/base.py): UTC datetimes on every backend, the naming
convention of constraints, and the app's metadata row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.db.models import AppMeta, Base, UTCDateTime, as_utc
from tests.db.models.conftest import AT, refused

PARIS = timezone(timedelta(hours=1))
SQLITE = sqlite.dialect()
POSTGRES = postgresql.dialect()  # type: ignore[no-untyped-call]


def test_an_aware_datetime_is_stored_as_utc_and_a_naive_one_as_it_is() -> None:
    column = UTCDateTime()
    paris = datetime(2026, 11, 1, 13, 0, tzinfo=PARIS)
    stored = column.process_bind_param(paris, SQLITE)
    assert stored == paris and stored is not None and stored.utcoffset() == timedelta(0)
    naive = datetime(2026, 11, 1, 12, 0)
    assert column.process_bind_param(naive, POSTGRES) is naive
    assert column.process_bind_param(None, SQLITE) is None


def test_a_datetime_reads_back_as_aware_utc() -> None:
    column = UTCDateTime()
    naive = column.process_result_value(datetime(2026, 11, 1, 12, 0), SQLITE)
    assert naive == AT and naive is not None and naive.tzinfo is UTC
    paris = column.process_result_value(datetime(2026, 11, 1, 13, 0, tzinfo=PARIS), POSTGRES)
    assert paris == AT and paris is not None and paris.tzinfo is UTC
    assert as_utc(None) is None
    with pytest.raises(AssertionError):
        as_utc("2026-11-01 12:00")


def test_an_instant_survives_a_round_trip_through_sqlite(session: Session) -> None:
    session.add(AppMeta(name="x", value="y", created_at=datetime(2026, 11, 1, 13, 0, tzinfo=PARIS)))
    session.flush()
    session.expire_all()
    stored = session.scalar(select(AppMeta.created_at).where(AppMeta.name == "x"))
    assert stored == AT and stored is not None and stored.tzinfo is UTC
    raw = session.scalar(text("SELECT created_at FROM app_meta WHERE name = 'x'"))
    assert str(raw).startswith("2026-11-01 12:00:00")  # kept as UTC, without an offset


def test_constraints_are_named_by_the_convention() -> None:
    tables = Base.metadata.tables
    assert tables["player"].primary_key.name == "pk_player"
    assert {c.name for c in tables["move"].constraints} >= {
        "pk_move",
        "uq_move_game_id_idempotency_key",
        "fk_move_game_id_game",
    }
    assert "uq_arena_game_arena_id_player_id_seq" in {
        c.name for c in tables["arena_game"].constraints
    }


def test_a_fact_is_recorded_once_by_name(session: Session) -> None:
    session.add(AppMeta(name="deal_key_fingerprint", value="a", created_at=AT))
    session.flush()
    again = {"name": "deal_key_fingerprint", "value": "b", "created_at": AT}
    assert "UNIQUE" in refused(session, AppMeta, **again)
