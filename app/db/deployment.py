"""Facts about the deployment kept in the database itself (table ``app_meta``, migration 0012).

- The **deal key's fingerprint**: an HMAC of a fixed text keyed with ``DEAL_KEY``, recorded by
  the first process that starts on the database. It tells whether a process runs with the key
  the stored games were dealt with (another key changes every stored game's cards) without
  storing anything from which the key could be found.
- The **migration lock**: a PostgreSQL advisory lock held while Alembic migrates, so that any
  number of instances may start (and migrate) at once: one migrates, the others wait and then
  find the schema current.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import Enum

from sqlalchemy import Connection, Engine, insert, select
from sqlalchemy.exc import IntegrityError

from app.db.models import AppMeta

DEAL_KEY_FINGERPRINT = "deal_key_fingerprint"
_FINGERPRINT_TEXT = b"patience-hall: deal key fingerprint, v1"
# pg_advisory_lock's key: any constant the app uses for nothing else ("PH-MIGR").
MIGRATION_LOCK = 0x50482D4D49475200 >> 1


def key_fingerprint(key: bytes) -> str:
    return hmac.new(key, _FINGERPRINT_TEXT, hashlib.sha256).hexdigest()


class KeyCheck(Enum):
    RECORDED = "recorded"  # first start on this database: the key is now the database's own
    MATCHES = "matches"
    DIFFERS = "differs"


def check_deal_key(engine: Engine, key: bytes) -> KeyCheck:
    """Compares ``key`` with the fingerprint stored in the database, recording it if none is."""
    mine = key_fingerprint(key)
    for _ in range(2):  # two first starts at once: one insert wins, the other reads it
        with engine.begin() as db:
            stored = db.scalar(select(AppMeta.value).where(AppMeta.name == DEAL_KEY_FINGERPRINT))
            if stored is not None:
                return KeyCheck.MATCHES if hmac.compare_digest(stored, mine) else KeyCheck.DIFFERS
        try:
            with engine.begin() as db:
                db.execute(
                    insert(AppMeta).values(
                        name=DEAL_KEY_FINGERPRINT, value=mine, created_at=datetime.now(UTC)
                    )
                )
        except IntegrityError:
            continue
        return KeyCheck.RECORDED
    raise RuntimeError("the deal key fingerprint could not be read or recorded")


@contextmanager
def migration_lock(connection: Connection) -> Iterator[None]:
    """Holds the migration lock on PostgreSQL (a session lock: it outlives the commit of the
    statement that took it); elsewhere a no-op (SQLite serializes writers on its own)."""
    if connection.dialect.name != "postgresql":
        yield
        return
    connection.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK})")
    connection.commit()
    try:
        yield
    finally:
        connection.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})")
        connection.commit()
