"""deal and per-game-day counters, indexes for deal pages and player histories

Deal pages and each game's overall win rate read counters (``deal_stats``,
``game_daily_stats``) instead of counting games; both are filled here from the games already
played. The deal index gains ``finished_at`` (a deal's finished games, latest first), and a
player's games get an index in the order they were first played. On PostgreSQL the daily_stats
index carries the counters, for index-only period leaderboards.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 20:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The first game to reach the record holds it (a later one must do strictly better).
_BEST = (
    "SELECT g.id FROM game g WHERE g.game = deal_stats.game AND g.deal = deal_stats.deal"
    " AND g.status = 'won' AND g.first_move_at IS NOT NULL ORDER BY {order}, g.finished_at, g.id"
    " LIMIT 1"
)


def upgrade() -> None:
    op.create_table(
        "deal_stats",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("deal", sa.BigInteger(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("fewest_moves", sa.Integer(), nullable=True),
        sa.Column("fewest_game_id", sa.String(length=32), nullable=True),
        sa.Column("fastest_ms", sa.BigInteger(), nullable=True),
        sa.Column("fastest_game_id", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["fastest_game_id"], ["game.id"], name=op.f("fk_deal_stats_fastest_game_id_game")
        ),
        sa.ForeignKeyConstraint(
            ["fewest_game_id"], ["game.id"], name=op.f("fk_deal_stats_fewest_game_id_game")
        ),
        sa.PrimaryKeyConstraint("game", "deal", name=op.f("pk_deal_stats")),
    )
    op.create_table(
        "game_daily_stats",
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("game", "day", name=op.f("pk_game_daily_stats")),
    )
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_index("ix_game_deal")
        batch_op.create_index(
            "ix_game_deal_finished", ["game", "deal", "finished_at"], unique=False
        )
        batch_op.create_index(
            "ix_game_player_first_move", ["player_id", "first_move_at"], unique=False
        )

    # Recent-period leaderboards add up a period's rows of daily_stats: on PostgreSQL the index
    # now carries the counters (an index-only scan; SQLite ignores INCLUDE).
    with op.batch_alter_table("daily_stats", schema=None) as batch_op:
        batch_op.drop_index("ix_daily_stats_game_day")
        batch_op.create_index(
            "ix_daily_stats_game_day",
            ["game", "day"],
            unique=False,
            postgresql_include=["player_id", "played", "won"],
        )

    postgres = op.get_bind().dialect.name == "postgresql"
    day = "(first_move_at AT TIME ZONE 'UTC')::date" if postgres else "date(first_move_at)"
    op.execute(
        "INSERT INTO game_daily_stats (game, day, played, won)"
        f" SELECT game, {day}, count(*), sum(CASE WHEN status = 'won' THEN 1 ELSE 0 END)"
        f" FROM game WHERE first_move_at IS NOT NULL GROUP BY game, {day}"
    )
    op.execute(
        "INSERT INTO deal_stats (game, deal, played, won)"
        " SELECT game, deal, count(*), sum(CASE WHEN status = 'won' THEN 1 ELSE 0 END)"
        " FROM game WHERE first_move_at IS NOT NULL GROUP BY game, deal"
    )
    op.execute(
        "UPDATE deal_stats SET"
        f" fewest_game_id = ({_BEST.format(order='g.moves')}),"
        f" fastest_game_id = ({_BEST.format(order='g.duration_ms')})"
        " WHERE won > 0"
    )
    op.execute(
        "UPDATE deal_stats SET"
        " fewest_moves = (SELECT moves FROM game WHERE game.id = deal_stats.fewest_game_id),"
        " fastest_ms = (SELECT duration_ms FROM game WHERE game.id = deal_stats.fastest_game_id)"
        " WHERE won > 0"
    )


def downgrade() -> None:
    with op.batch_alter_table("daily_stats", schema=None) as batch_op:
        batch_op.drop_index("ix_daily_stats_game_day")
        batch_op.create_index("ix_daily_stats_game_day", ["game", "day"], unique=False)
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_index("ix_game_player_first_move")
        batch_op.drop_index("ix_game_deal_finished")
        batch_op.create_index("ix_game_deal", ["game", "deal"], unique=False)
    op.drop_table("game_daily_stats")
    op.drop_table("deal_stats")
