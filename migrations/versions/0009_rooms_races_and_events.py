"""rooms, races and their events (live play)

Adds ``room``, ``room_member``, ``race`` and ``event``, and two columns on ``game``: the race a
game belongs to (``race_id``) and the moment before which its moves are refused
(``not_before``, the countdown of a race).

Revision ID: 0009
Revises: 0006
Create Date: 2026-11-23 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "room",
        sa.Column("code", sa.String(length=6), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("active_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"], ["player.id"], name=op.f("fk_room_created_by_player")
        ),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_room")),
    )
    with op.batch_alter_table("room", schema=None) as batch_op:
        batch_op.create_index("ix_room_status_active", ["status", "active_at"], unique=False)

    op.create_table(
        "room_member",
        sa.Column("room_code", sa.String(length=6), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_room_member_player_id_player")
        ),
        sa.ForeignKeyConstraint(
            ["room_code"], ["room.code"], name=op.f("fk_room_member_room_code_room")
        ),
        sa.PrimaryKeyConstraint("room_code", "player_id", name=op.f("pk_room_member")),
    )
    with op.batch_alter_table("room_member", schema=None) as batch_op:
        batch_op.create_index("ix_room_member_player", ["player_id"], unique=False)

    op.create_table(
        "race",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("room_code", sa.String(length=6), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("deal", sa.BigInteger(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["room_code"], ["room.code"], name=op.f("fk_race_room_code_room")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_race")),
        sa.UniqueConstraint("room_code", "number", name=op.f("uq_race_room_code_number")),
    )

    op.create_table(
        "event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("room_code", sa.String(length=6), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["room_code"], ["room.code"], name=op.f("fk_event_room_code_room")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event")),
    )
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.create_index("ix_event_room_id", ["room_code", "id"], unique=False)

    # Not batch mode (as 0004): rebuilding ``game`` on SQLite would trip the foreign keys that
    # point at it, and both databases add and drop a plain nullable column in place. So
    # ``race_id`` is a plain integer, without a foreign key (SQLite cannot drop a column that
    # has one); race rows are never deleted.
    op.add_column("game", sa.Column("race_id", sa.Integer(), nullable=True))
    op.add_column("game", sa.Column("not_before", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("game", "not_before")
    op.drop_column("game", "race_id")
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_index("ix_event_room_id")
    op.drop_table("event")
    op.drop_table("race")
    with op.batch_alter_table("room_member", schema=None) as batch_op:
        batch_op.drop_index("ix_room_member_player")
    op.drop_table("room_member")
    with op.batch_alter_table("room", schema=None) as batch_op:
        batch_op.drop_index("ix_room_status_active")
    op.drop_table("room")
