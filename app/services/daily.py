"""The deal of the day: one deal number per game and UTC date, the same for everyone.

The number is a keyed hash (HMAC-SHA256 with the server's deal key) of the game and the date, so
that nobody outside the server can compute a future day's deal and look at its layout early.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, date, datetime, timedelta

from app.engine import GAMES, MAX_DEAL


def today() -> date:
    return datetime.now(UTC).date()


def daily_deal(slug: str, day: date, key: bytes) -> int:
    message = f"daily|v2|{slug}|{day.isoformat()}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % MAX_DEAL + 1


def daily_deals(day: date, key: bytes) -> dict[str, int]:
    return {slug: daily_deal(slug, day, key) for slug in GAMES}


def is_daily(slug: str, number: int, day: date, key: bytes) -> bool:
    return slug in GAMES and daily_deal(slug, day, key) == number


RECENT_DAYS = 30  # how far back a deal page still names the day a deal of the day was dealt


def day_of(slug: str, number: int, today: date, key: bytes) -> date | None:
    """The day (today or one of the last RECENT_DAYS) whose deal of the day this is, if any."""
    for back in range(RECENT_DAYS + 1):
        day = today - timedelta(days=back)
        if is_daily(slug, number, day, key):
            return day
    return None
