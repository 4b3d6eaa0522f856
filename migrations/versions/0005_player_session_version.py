"""player.session_version: revocable browser sessions

A browser session carries the version its player had when it was signed in; signing out and
changing the password bump it, so every other copy of the session cookie stops working.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 19:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Not batch mode: rebuilding ``player`` on SQLite would trip the foreign keys that point at it
# once games exist; both databases add and drop a plain column in place (SQLite 3.35+).
def upgrade() -> None:
    op.add_column(
        "player", sa.Column("session_version", sa.Integer(), server_default="0", nullable=False)
    )


def downgrade() -> None:
    op.execute("ALTER TABLE player DROP COLUMN session_version")
