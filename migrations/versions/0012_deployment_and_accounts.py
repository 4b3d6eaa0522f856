"""deployment facts and account states

``app_meta``: facts about the deployment (the deal key's fingerprint, recorded by the first
process that starts on the database: app/db/deployment.py). ``player.banned_at`` (an
operator's ban) and ``player.deleted_at`` (a deleted account, kept as a ghost name).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 16:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "app_meta",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_app_meta")),
    )
    # Not batch mode (as 0007): both databases add a nullable column in place.
    op.add_column("player", sa.Column("banned_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("player", sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE player DROP COLUMN deleted_at")
    op.execute("ALTER TABLE player DROP COLUMN banned_at")
    op.drop_table("app_meta")
