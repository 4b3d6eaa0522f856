"""Deals of one's own (contract v3, Competition): certified-winnable deals dealt in a
competition, each to one player only.

A second account can play a shared deal through and relay it, so ranked play uses a deal nobody
else can have seen: one drawn from the certified pool among the **fresh** deals (no game of it
was ever dealt, to anyone) and **claimed** for one player in the same transaction
(``competition_deal``, keyed by the deal: a second claim of it fails). While the claim's seal
holds (app/services/seal.py) nobody else can start a game of it, and the pool never deals it
again, in a competition or as a casual ``"winnable": true`` deal.

Which fresh deal a player gets is decided by a keyed hash (HMAC-SHA256 with the server's deal
key) of what the deal is for (game, date or event, player): a point in the range of certified
deal numbers, and the first fresh deal from there on. Nobody outside the server can compute it,
and a draw reads a few index entries whatever the size of the pool.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from datetime import datetime

from sqlalchemy import Select, exists, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.models import CompetitionDeal, DealVerdict, Game
from app.engine import GAMES
from app.services.errors import NoCertifiedDeals

log = logging.getLogger(__name__)

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


def has_fresh(db: Session, slug: str) -> bool:
    """Whether a draw of ``slug`` can find a fresh certified deal now."""
    return db.execute(_fresh(slug).limit(1)).first() is not None


def fresh_deals(db: Session, slug: str) -> list[tuple[int, int]]:
    """The certified deals of ``slug`` nobody has a game of, nor a claim on: (deal, par)."""
    return [(deal, _par(par, text)) for deal, par, text in db.execute(_fresh(slug)).all()]


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
    # A keyed point in the range of certified deal numbers, then the first fresh deal from
    # there on (wrapping round): a few index steps, however large the pool or the games.
    lo, hi = db.execute(
        select(func.min(DealVerdict.deal), func.max(DealVerdict.deal)).where(
            DealVerdict.game == slug, DealVerdict.certified
        )
    ).one()
    start = lo + pick(key, label, hi - lo + 1) if lo is not None else 0
    for _attempt in range(_ATTEMPTS):
        found = db.execute(_fresh(slug).where(DealVerdict.deal >= start).limit(1)).first()
        if found is None:
            found = db.execute(_fresh(slug).limit(1)).first()
        if found is None:
            # The operator's fix, in the log; the player is told what it means for them.
            log.warning(
                "no fresh certified %s deal is left for competitions: certify more with "
                "python -m app.cli certify --game %s --count N",
                slug,
                slug,
            )
            raise NoCertifiedDeals(
                "No %(name)s deal is ready for competitions just now: try again later, or "
                "another game.",
                name=GAMES[slug].name,
            )
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
        except IntegrityError:  # another player's draw claimed it meanwhile: the next one
            start = deal + 1
            continue
        return deal, par
    raise NoCertifiedDeals("Too many players are drawing deals at once: try again.")
