"""The JSON API (contract.md): bearer tokens, no cookies, Pydantic answers."""

from app.web.api import accounts, games, rooms, stats

__all__ = ["accounts", "games", "rooms", "stats"]
