"""The JSON API (contract.md): bearer tokens, no cookies, Pydantic answers."""

from app.web.api import accounts, competition, games, rooms, stats

__all__ = ["accounts", "competition", "games", "rooms", "stats"]
