"""competition: the daily challenge (deals of one's own, par, one game a day)

- ``game.competition``: "challenge" or "event" for a game on a deal of the player's own;
- ``deal_verdict.par``: the length of the shortest winning line the solver knows; existing
  winnable rows get the length of their stored (already shortened) solution;
- ``competition_deal``: certified deals dealt in a competition, each to one player only, sealed
  until a known moment (app/services/pool.py);
- ``challenge``: each player's daily challenge game per game and UTC day;
- rated races: ``room.rated`` and ``race.rated`` (formed by the server from the queue),
  ``race_queue`` (players waiting, with their address and browser session), ``race_rating``
  (per player and game) and ``rating_change`` (each change, by race);
- events (arenas): ``arena``, ``arena_player``, ``arena_game``; the event log's ``room_code``
  loses its foreign key (an arena's live standings are logged under ``@<id>``).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 23:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VERDICT = sa.table(
    "deal_verdict",
    sa.column("game", sa.String),
    sa.column("deal", sa.BigInteger),
    sa.column("outcome", sa.String),
    sa.column("solution", sa.Text),
    sa.column("par", sa.Integer),
)


def upgrade() -> None:
    op.add_column("game", sa.Column("competition", sa.String(length=10), nullable=True))
    op.add_column("deal_verdict", sa.Column("par", sa.Integer(), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(_VERDICT.c.game, _VERDICT.c.deal, _VERDICT.c.solution).where(
            _VERDICT.c.outcome == "winnable", _VERDICT.c.solution.is_not(None)
        )
    ).all()
    for game, deal, solution in rows:
        conn.execute(
            _VERDICT.update()
            .where(_VERDICT.c.game == game, _VERDICT.c.deal == deal)
            .values(par=len(solution.split()))
        )
    op.create_table(
        "competition_deal",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("deal", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("sealed_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_competition_deal_player_id_player")
        ),
        sa.PrimaryKeyConstraint("game", "deal", name=op.f("pk_competition_deal")),
    )
    op.create_table(
        "challenge",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game_id", sa.String(length=32), nullable=False),
        sa.Column("par", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_challenge_game_id_game")),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_challenge_player_id_player")
        ),
        sa.PrimaryKeyConstraint("game", "day", "player_id", name=op.f("pk_challenge")),
        sa.UniqueConstraint("game_id", name=op.f("uq_challenge_game_id")),
    )
    op.create_index("ix_challenge_player", "challenge", ["player_id", "game", "day"])
    op.add_column(
        "room", sa.Column("rated", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.add_column(
        "race", sa.Column("rated", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.create_table(
        "race_queue",
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("session_key", sa.String(length=64), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("room_code", sa.String(length=6), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_race_queue_player_id_player")
        ),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_race_queue")),
    )
    op.create_index("ix_race_queue_game", "race_queue", ["game", "joined_at"])
    op.create_table(
        "race_rating",
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_race_rating_player_id_player")
        ),
        sa.PrimaryKeyConstraint("player_id", "game", name=op.f("pk_race_rating")),
    )
    op.create_index("ix_race_rating_board", "race_rating", ["game", "rating"])
    op.create_table(
        "rating_change",
        sa.Column("race_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("forfeit", sa.Boolean(), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_rating_change_player_id_player")
        ),
        sa.ForeignKeyConstraint(
            ["race_id"], ["race.id"], name=op.f("fk_rating_change_race_id_race")
        ),
        sa.PrimaryKeyConstraint("race_id", "player_id", name=op.f("pk_rating_change")),
    )
    op.create_index("ix_rating_change_player", "rating_change", ["player_id", "game", "race_id"])
    # Events (arenas) write their live standings to the event log under "@<id>": the log's
    # room_code no longer names a room row.
    with op.batch_alter_table("event") as batch_op:
        batch_op.drop_constraint("fk_event_room_code_room", type_="foreignkey")
    op.create_table(
        "arena",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_arena")),
    )
    op.create_index("ix_arena_ends", "arena", ["ends_at"])
    op.create_table(
        "arena_player",
        sa.Column("arena_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["arena_id"], ["arena.id"], name=op.f("fk_arena_player_arena_id_arena")
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_arena_player_player_id_player")
        ),
        sa.PrimaryKeyConstraint("arena_id", "player_id", name=op.f("pk_arena_player")),
    )
    op.create_table(
        "arena_game",
        sa.Column("game_id", sa.String(length=32), nullable=False),
        sa.Column("arena_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["arena_id"], ["arena.id"], name=op.f("fk_arena_game_arena_id_arena")
        ),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name=op.f("fk_arena_game_game_id_game")),
        sa.ForeignKeyConstraint(
            ["player_id"], ["player.id"], name=op.f("fk_arena_game_player_id_player")
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_arena_game")),
        sa.UniqueConstraint(
            "arena_id", "player_id", "seq", name=op.f("uq_arena_game_arena_id_player_id_seq")
        ),
    )
    op.create_index("ix_arena_game_arena", "arena_game", ["arena_id", "player_id"])


def downgrade() -> None:
    op.drop_index("ix_arena_game_arena", table_name="arena_game")
    op.drop_table("arena_game")
    op.drop_table("arena_player")
    op.drop_index("ix_arena_ends", table_name="arena")
    op.drop_table("arena")
    op.execute("DELETE FROM event WHERE room_code NOT IN (SELECT code FROM room)")
    with op.batch_alter_table("event") as batch_op:
        batch_op.create_foreign_key("fk_event_room_code_room", "room", ["room_code"], ["code"])
    op.drop_index("ix_rating_change_player", table_name="rating_change")
    op.drop_table("rating_change")
    op.drop_index("ix_race_rating_board", table_name="race_rating")
    op.drop_table("race_rating")
    op.drop_index("ix_race_queue_game", table_name="race_queue")
    op.drop_table("race_queue")
    with op.batch_alter_table("race") as batch_op:
        batch_op.drop_column("rated")
    with op.batch_alter_table("room") as batch_op:
        batch_op.drop_column("rated")
    op.drop_index("ix_challenge_player", table_name="challenge")
    op.drop_table("challenge")
    op.drop_table("competition_deal")
    op.execute("ALTER TABLE deal_verdict DROP COLUMN par")
    op.execute("ALTER TABLE game DROP COLUMN competition")
