"""player.prefs: display and play preferences that follow the account

The theme, the card back, the four-colour deck, large cards, sounds, auto-move and the guides
already read: the same dot-separated flags as the ``ph_prefs`` cookie, kept on the player so
that signing in on another device brings them along. NULL: never saved (the cookie decides).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 17:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Not batch mode, as 0005: both databases add and drop a plain column in place.
def upgrade() -> None:
    op.add_column("player", sa.Column("prefs", sa.String(length=200), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE player DROP COLUMN prefs")
