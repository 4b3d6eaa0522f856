"""Facts the deployment keeps in its database (app/db/deployment.py): the deal key's
fingerprint, recorded once and compared on every start, and the migration lock. Several
instances migrating at once: test_migration_lock.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import Connection, Engine, create_engine, insert, select, text

from app.db.deployment import (
    DEAL_KEY_FINGERPRINT,
    MIGRATION_LOCK,
    KeyCheck,
    check_deal_key,
    key_fingerprint,
    migration_lock,
)
from app.db.models import AppMeta
from app.db.session import make_engine
from tests.databases import fresh_postgres_database
from tests.migrated import migrated_sqlite

KEY_A, KEY_B = b"the first deal key, long enough", b"another deal key, long enough too"


@pytest.fixture()
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = make_engine(migrated_sqlite(tmp_path_factory, "deployment"))
    yield engine
    engine.dispose()


def test_a_fingerprint_tells_keys_apart_and_shows_nothing_of_the_key() -> None:
    a = key_fingerprint(KEY_A)
    assert a == key_fingerprint(KEY_A)  # the same key, the same fingerprint, every process
    assert a != key_fingerprint(KEY_B)
    assert len(a) == 64 and int(a, 16) >= 0  # an HMAC-SHA-256, in hex
    assert KEY_A.hex() not in a and KEY_A.decode() not in a


def test_the_first_start_records_the_key_and_later_starts_compare(engine: Engine) -> None:
    assert check_deal_key(engine, KEY_A) is KeyCheck.RECORDED
    assert check_deal_key(engine, KEY_A) is KeyCheck.MATCHES
    assert check_deal_key(engine, KEY_B) is KeyCheck.DIFFERS
    assert check_deal_key(engine, KEY_A) is KeyCheck.MATCHES  # another key recorded nothing
    with engine.connect() as db:
        rows = db.execute(select(AppMeta.name, AppMeta.value, AppMeta.created_at)).all()
    ((name, value, created_at),) = rows
    assert name == DEAL_KEY_FINGERPRINT and value == key_fingerprint(KEY_A)
    assert created_at.tzinfo is UTC


class _RivalStart:
    """An engine whose second transaction finds that another process (with ``rival``'s key)
    recorded its fingerprint just before: two first starts at once."""

    def __init__(self, engine: Engine, rival: bytes) -> None:
        self.engine, self.rival, self.begun = engine, rival, 0

    def begin(self) -> AbstractContextManager[Connection]:
        self.begun += 1
        if self.begun == 2:
            with self.engine.begin() as db:
                db.execute(
                    insert(AppMeta).values(
                        name=DEAL_KEY_FINGERPRINT,
                        value=key_fingerprint(self.rival),
                        created_at=datetime.now(UTC),
                    )
                )
        return self.engine.begin()


@pytest.mark.parametrize(
    ("rival", "found"),
    [(KEY_A, KeyCheck.MATCHES), (KEY_B, KeyCheck.DIFFERS)],
    ids=["same-key", "another-key"],
)
def test_of_two_first_starts_at_once_one_records_and_the_other_compares(
    engine: Engine, rival: bytes, found: KeyCheck
) -> None:
    racing = _RivalStart(engine, rival)
    assert check_deal_key(cast(Engine, racing), KEY_A) is found
    assert racing.begun == 3  # read (nothing), insert (refused), read again


def test_a_database_without_the_table_is_an_error(tmp_path: Path) -> None:
    bare = make_engine(f"sqlite:///{tmp_path / 'bare.db'}")
    try:
        with pytest.raises(Exception, match="app_meta"):
            check_deal_key(bare, KEY_A)
    finally:
        bare.dispose()


def test_the_migration_lock_is_nothing_on_sqlite(engine: Engine) -> None:
    with engine.connect() as db, migration_lock(db):
        assert not db.in_transaction()  # it took nothing, not even a transaction


@pytest.mark.postgres
def test_the_migration_lock_holds_postgresql_s_advisory_lock_until_it_ends() -> None:
    url = fresh_postgres_database(f"ph_deploy_lock_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    engine = create_engine(url)
    try:
        with engine.connect() as holder, engine.connect() as other:

            def free() -> bool:
                took = other.scalar(text(f"SELECT pg_try_advisory_lock({MIGRATION_LOCK})"))
                if took:
                    other.scalar(text(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
                other.commit()
                return bool(took)

            with migration_lock(holder):
                assert not holder.in_transaction()  # committed: a session lock outlives it
                assert not free()
            assert free()
    finally:
        engine.dispose()
