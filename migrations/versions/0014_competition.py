"""competition: the daily challenge (deals of one's own, par, one game a day)

- ``game.competition``: "challenge" or "event" for a game on a deal of the player's own;
- ``deal_verdict.par``: the length of the shortest winning line the solver knows; existing
  winnable rows get the length of their stored (already shortened) solution;
- ``competition_deal``: certified deals dealt in a competition, each to one player only, sealed
  until a known moment (app/services/pool.py);
- ``challenge``: each player's daily challenge game per game and UTC day.

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


def downgrade() -> None:
    op.drop_index("ix_challenge_player", table_name="challenge")
    op.drop_table("challenge")
    op.drop_table("competition_deal")
    op.execute("ALTER TABLE deal_verdict DROP COLUMN par")
    op.execute("ALTER TABLE game DROP COLUMN competition")
