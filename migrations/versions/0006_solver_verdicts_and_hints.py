"""the solver's verdicts on deals (and the certified pool of winnable deals), hints per game

Revision ID: 0006
Revises: 0007
Create Date: 2026-11-23 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deal_verdict",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("deal", sa.BigInteger(), nullable=False),
        sa.Column("outcome", sa.String(length=10), nullable=False),
        sa.Column("solution", sa.Text(), nullable=True),
        sa.Column("positions", sa.Integer(), nullable=False),
        sa.Column("certified", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("game", "deal", name=op.f("pk_deal_verdict")),
    )
    with op.batch_alter_table("deal_verdict", schema=None) as batch_op:
        batch_op.create_index("ix_deal_verdict_pool", ["game", "certified"], unique=False)
    op.create_table(
        "game_hint",
        sa.Column("game_id", sa.String(length=32), nullable=False),
        sa.Column("hints", sa.Integer(), nullable=False),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_game_hint_game_id_game")),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_hint")),
    )


def downgrade() -> None:
    op.drop_table("game_hint")
    with op.batch_alter_table("deal_verdict", schema=None) as batch_op:
        batch_op.drop_index("ix_deal_verdict_pool")
    op.drop_table("deal_verdict")
