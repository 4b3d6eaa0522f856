"""What the solver stores: deals' verdicts, games' hints and coach analyses."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, UTCDateTime


class DealVerdict(Base):
    """What the solver found about one deal, every card known: ``winnable`` (with a shortened
    winning line, moves in text form separated by spaces), ``lost`` (proved) or ``unknown``
    (undecided within its budget). Rows with ``certified`` form the pool of winnable deals
    that ``POST /api/games {"winnable": true}`` draws from (``python -m app.cli certify``)."""

    __tablename__ = "deal_verdict"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    deal: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    outcome: Mapped[str] = mapped_column(String(10))
    solution: Mapped[str | None] = mapped_column(Text)
    positions: Mapped[int] = mapped_column(Integer, default=0)
    certified: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Par: the length of the shortest winning line the solver knows (winnable deals only).
    par: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (Index("ix_deal_verdict_pool", "game", "certified"),)


class GameHint(Base):
    """Hints a game's player asked for: a hinted game is casual from its first hint on."""

    __tablename__ = "game_hint"

    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), primary_key=True)
    hints: Mapped[int] = mapped_column(Integer, default=0)
    first_at: Mapped[datetime] = mapped_column(UTCDateTime())


class GameCoach(Base):
    """What the coach keeps with a game (issue #22): the winning line its last exact hint
    found (``line``: moves in text form separated by spaces, from the position stored in
    ``line_start``, a serialized state), continued while the player follows it, in any process
    and after a restart; and the analysis of the game once it has ended (``analysis``: JSON),
    stored when decided."""

    __tablename__ = "game_coach"

    game_id: Mapped[str] = mapped_column(ForeignKey("game.id"), primary_key=True)
    line_start: Mapped[str | None] = mapped_column(Text)
    line: Mapped[str | None] = mapped_column(Text)
    analysis: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
