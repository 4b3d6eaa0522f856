"""The deal of the day: one deal number per game and UTC date, the same for everyone."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime

from app.engine import GAMES, MAX_DEAL


def today() -> date:
    return datetime.now(UTC).date()


def daily_deal(slug: str, day: date) -> int:
    digest = hashlib.sha256(f"daily|{slug}|{day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MAX_DEAL + 1


def daily_deals(day: date) -> dict[str, int]:
    return {slug: daily_deal(slug, day) for slug in GAMES}


def is_daily(slug: str, number: int, day: date) -> bool:
    return slug in GAMES and daily_deal(slug, day) == number
