"""Deals of one's own (contract v3, Competition): certified-winnable deals dealt in a
competition, each to one player only.

A second account can play a shared deal through and relay it, so ranked play uses a deal nobody
else can have seen: one drawn from the certified pool among the **fresh** deals (no game of it
was ever dealt, to anyone) and **claimed** for one player in the same transaction
(``competition_deal``, keyed by the deal: a second claim of it fails). While the claim's seal
holds (app/services/seal.py) nobody else can start a game of it, and the pool never deals it
again, in a competition or as a casual ``"winnable": true`` deal.

Which fresh deal a player gets is a keyed hash (HMAC-SHA256 with the server's deal key) of what
the deal is for (game, date or event, player) over the fresh deals in order: nobody outside the
server can compute it.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime

from sqlalchemy import Select, exists, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.models import CompetitionDeal, DealVerdict, Game
from app.engine import GAMES
from app.services.errors import NoCertifiedDeals

CHALLENGE = "challenge"
EVENT = "event"
_ATTEMPTS = 5  # claims lost to another player's claim of the same deal, at most, per draw


def _fresh(slug: str) -> Select[int, int | None, str | None]:
    played = exists().where(Game.game == slug, Game.deal == DealVerdict.deal)
    claimed = exists().where(CompetitionDeal.game == slug, CompetitionDeal.deal == DealVerdict.deal)
    return (
        select(DealVerdict.deal, DealVerdict.par, DealVerdict.solution)
        .where(DealVerdict.game == slug, DealVerdict.certified, ~played, ~claimed)
        .order_by(DealVerdict.deal)
    )


def _par(par: int | None, text: str | None) -> int:
    return par if par is not None else len((text or "").split())


def fresh_deals(db: Session, slug: str) -> list[tuple[int, int]]:
    """The certified deals of ``slug`` nobody has a game of, nor a claim on: (deal, par)."""
    return [(deal, _par(par, text)) for deal, par, text in db.execute(_fresh(slug)).all()]


def fresh_count(db: Session, slug: str) -> int:
    return int(db.scalar(select(func.count()).select_from(_fresh(slug).subquery())) or 0)


def pick(key: bytes, label: str, count: int) -> int:
    """The index, among ``count`` fresh deals, that ``label`` draws with the secret key."""
    digest = hmac.new(key, f"own-deal|v1|{label}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % count


def claim(
    db: Session,
    slug: str,
    key: bytes,
    label: str,
    *,
    player_id: str,
    kind: str,
    sealed_until: datetime,
    stamp: datetime,
) -> tuple[int, int]:
    """Draws and claims a fresh certified deal for ``player_id``: (deal, par). Inside the
    caller's transaction; a deal another player claimed meanwhile is skipped."""
    for attempt in range(_ATTEMPTS):
        # Counted and picked in the database: a draw reads one row, however large the pool.
        count = fresh_count(db, slug)
        if not count:
            name = GAMES[slug].name
            raise NoCertifiedDeals(
                f"No fresh certified {name} deal is left for competitions; an operator "
                f"certifies more (python -m app.cli certify --game {slug} --count N)."
            )
        index = (pick(key, label, count) + attempt) % count
        found = db.execute(_fresh(slug).offset(index).limit(1)).first()
        if found is None:  # taken meanwhile: count again
            continue
        deal, par = found[0], _par(found[1], found[2])
        try:
            with db.begin_nested():
                db.execute(
                    insert(CompetitionDeal).values(
                        game=slug,
                        deal=deal,
                        kind=kind,
                        player_id=player_id,
                        sealed_until=sealed_until,
                        created_at=stamp,
                    )
                )
        except IntegrityError:
            continue
        return deal, par
    raise NoCertifiedDeals("Too many players are drawing deals at once: try again.")
