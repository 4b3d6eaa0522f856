"""state snapshots in the move log

Every 64th move still in force stores the game's serialized state in its move row, so that a
replay step or an undo starts from the nearest snapshot instead of from the deal: their cost no
longer grows with the length of the game. Older rows keep NULL (their games replay from the
deal, as before).

Revision ID: 0008
Revises: 0005
Create Date: 2026-11-23 19:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("move", schema=None) as batch_op:
        batch_op.add_column(sa.Column("snapshot", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("move", schema=None) as batch_op:
        batch_op.drop_column("snapshot")
