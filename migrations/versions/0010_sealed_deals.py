"""sealed deals: look-ups for the seal, and race events that no longer name a running race's deal

Contract v3 seals a deal while a competition on it is open (app/services/seal.py). Nothing new is
stored: the seal is read from the games and races as they are, and what a game has seen from its
state (app/engine/seen.py). So this migration only

- adds the indexes the seal asks on every read of a finished game: the races of a deal
  (``ix_race_deal``) and the games of a race (``ix_game_race``);
- rewrites the stored events of races still running, whose ``race.deal`` named the deal: a
  client that reconnects with ``Last-Event-ID`` reads events back from the table, and must not
  learn the number there. Rated games in play need nothing: their number is hidden on every
  read from now on.

Downgrade drops the indexes; the event rows keep ``deal: null`` (the race's row still has it).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 17:10:00.000000
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RACE = sa.table(
    "race",
    sa.column("room_code", sa.String),
    sa.column("number", sa.Integer),
    sa.column("status", sa.String),
)
_EVENT = sa.table(
    "event",
    sa.column("id", sa.Integer),
    sa.column("room_code", sa.String),
    sa.column("kind", sa.String),
    sa.column("data", sa.Text),
)


def upgrade() -> None:
    with op.batch_alter_table("race", schema=None) as batch_op:
        batch_op.create_index("ix_race_deal", ["game", "deal", "status"], unique=False)
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.create_index("ix_game_race", ["race_id"], unique=False)

    conn = op.get_bind()
    running = {
        (room, number)
        for room, number in conn.execute(
            sa.select(_RACE.c.room_code, _RACE.c.number).where(_RACE.c.status == "running")
        )
    }
    if not running:
        return
    rooms = sorted({room for room, _ in running})
    rows = conn.execute(
        sa.select(_EVENT.c.id, _EVENT.c.room_code, _EVENT.c.data).where(
            _EVENT.c.kind == "race", _EVENT.c.room_code.in_(rooms)
        )
    ).all()
    for event_id, room, text in rows:
        data = json.loads(text)
        race = data.get("race") if isinstance(data, dict) else None
        if not isinstance(race, dict) or (room, race.get("number")) not in running:
            continue
        if race.get("deal") is None:
            continue
        race["deal"] = None
        conn.execute(
            sa.update(_EVENT)
            .where(_EVENT.c.id == event_id)
            .values(data=json.dumps(data, separators=(",", ":")))
        )


def downgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_index("ix_game_race")
    with op.batch_alter_table("race", schema=None) as batch_op:
        batch_op.drop_index("ix_race_deal")
