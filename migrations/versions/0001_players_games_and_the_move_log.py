"""players, games and the move log

Revision ID: 0001
Revises:
Create Date: 2026-11-21 19:38:41.384555
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "player",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=24), nullable=False),
        sa.Column("name_key", sa.String(length=24), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player")),
        sa.UniqueConstraint("name_key", name=op.f("uq_player_name_key")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_player_token_hash")),
    )
    op.create_table(
        "game",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("deal", sa.BigInteger(), nullable=False),
        sa.Column("rules", sa.String(length=8), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("undos", sa.Integer(), nullable=False),
        sa.Column("can_undo", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("first_move_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration_ms", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_game_player_id_player")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_game")),
    )
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.create_index("ix_game_deal", ["game", "deal"], unique=False)
        batch_op.create_index("ix_game_player_status", ["player_id", "status"], unique=False)

    op.create_table(
        "move",
        sa.Column("game_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("notation", sa.String(length=24), nullable=True),
        sa.Column("revealed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("idempotency_key", sa.String(length=100), nullable=True),
        sa.Column("response", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_move_game_id_game")),
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_move")),
        sa.UniqueConstraint(
            "game_id", "idempotency_key", name=op.f("uq_move_game_id_idempotency_key")
        ),
    )


def downgrade() -> None:
    op.drop_table("move")
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_index("ix_game_player_status")
        batch_op.drop_index("ix_game_deal")

    op.drop_table("game")
    op.drop_table("player")
