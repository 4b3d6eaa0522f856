"""player changes announced: a NOTIFY on ``ph_players`` when a session or token is revoked

On PostgreSQL a trigger on ``player`` sends ``NOTIFY ph_players, '<player id>'`` when a row's
``session_version``, ``token_hash`` or ``prefs`` changes, whoever changes it (a request of any
worker or instance, ``python -m app.cli player revoke``, an operator's SQL). Every serving
process listens (app/db/broker.py) and forgets what it remembered of that player, so that its
caches of session versions and token owners can be kept for minutes instead of seconds: a
browser's move at a human pace no longer reads its session from the database (issue 26), and
a revocation takes effect everywhere at once instead of within 2 s (sessions) or 30 s (tokens).
The notification goes out when the transaction commits, and not at all if it rolls back.

SQLite serves one process: nothing to tell (the embedded default keeps the short lifetimes).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 07:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The channel's name is app.db.broker.PLAYERS_CHANNEL; a migration keeps its own copy, as it
# must keep working whatever the app's code becomes.
_FUNCTION = """
CREATE OR REPLACE FUNCTION ph_player_changed() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('ph_players', NEW.id);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql
"""

_TRIGGER = """
CREATE TRIGGER ph_player_changed
AFTER UPDATE OF session_version, token_hash, prefs ON player
FOR EACH ROW
WHEN (
    OLD.session_version IS DISTINCT FROM NEW.session_version
    OR OLD.token_hash IS DISTINCT FROM NEW.token_hash
    OR OLD.prefs IS DISTINCT FROM NEW.prefs
)
EXECUTE FUNCTION ph_player_changed()
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_FUNCTION)
    op.execute(_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS ph_player_changed ON player")
    op.execute("DROP FUNCTION IF EXISTS ph_player_changed()")
