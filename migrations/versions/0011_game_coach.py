"""the coach: a game's kept winning line (hints that lead somewhere) and its analysis

Adds ``game_coach``: per game, the winning line its last exact hint found (and the position
it starts from), continued while the player follows it, and the stored analysis of the game
once it has ended (issue #22).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 16:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_coach",
        sa.Column("game_id", sa.String(length=32), nullable=False),
        sa.Column("line_start", sa.Text(), nullable=True),
        sa.Column("line", sa.Text(), nullable=True),
        sa.Column("analysis", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_game_coach_game_id_game")),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_coach")),
    )


def downgrade() -> None:
    op.drop_table("game_coach")
