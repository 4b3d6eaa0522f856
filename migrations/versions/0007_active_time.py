"""active time of a game

``game.active_ms``: the time a game has been played, from its first move, summing the pauses
between its actions with each pause counted up to the idle cap (setting ``IDLE_CAP_SECONDS``).
Games played before this revision count their whole time until now, as before.

Revision ID: 0007
Revises: 0008
Create Date: 2026-11-23 19:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Not batch mode (as 0004): rebuilding ``game`` on SQLite would trip the foreign keys that
    # point at it, and both databases add a column with a constant default in place.
    op.add_column(
        "game", sa.Column("active_ms", sa.BigInteger(), nullable=False, server_default="0")
    )
    op.execute("UPDATE game SET active_ms = duration_ms WHERE duration_ms IS NOT NULL")


def downgrade() -> None:
    # SQLite (3.35+) drops a plain column in place, as PostgreSQL does.
    op.execute("ALTER TABLE game DROP COLUMN active_ms")
