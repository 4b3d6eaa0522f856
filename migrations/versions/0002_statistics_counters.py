"""statistics counters

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 19:41:30.784166
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "daily_stats",
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_daily_stats_player_id_player")
        ),
        sa.PrimaryKeyConstraint("player_id", "game", "day", name=op.f("pk_daily_stats")),
    )
    with op.batch_alter_table("daily_stats", schema=None) as batch_op:
        batch_op.create_index("ix_daily_stats_game_day", ["game", "day"], unique=False)

    op.create_table(
        "player_stats",
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("wilson", sa.Float(), nullable=False),
        sa.Column("best_ms", sa.BigInteger(), nullable=True),
        sa.Column("fewest_moves", sa.Integer(), nullable=True),
        sa.Column("current_streak", sa.Integer(), nullable=False),
        sa.Column("longest_streak", sa.Integer(), nullable=False),
        sa.Column("last_played_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_player_stats_player_id_player")
        ),
        sa.PrimaryKeyConstraint("player_id", "game", name=op.f("pk_player_stats")),
    )
    with op.batch_alter_table("player_stats", schema=None) as batch_op:
        batch_op.create_index("ix_player_stats_rank", ["game", "wilson", "won"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("player_stats", schema=None) as batch_op:
        batch_op.drop_index("ix_player_stats_rank")

    op.drop_table("player_stats")
    with op.batch_alter_table("daily_stats", schema=None) as batch_op:
        batch_op.drop_index("ix_daily_stats_game_day")

    op.drop_table("daily_stats")
