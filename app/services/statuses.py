"""The statuses a race, a room and an event (arena) go through, as stored and as compared.

A game's status is the engine's (``app.engine.Status``: playing, won, lost). These are string
enums: they compare equal to the strings the database holds and the JSON answers carry.
"""

from __future__ import annotations

from enum import StrEnum


class RaceStatus(StrEnum):
    RUNNING = "running"  # from the start of its countdown until its last game ends
    FINISHED = "finished"


class RoomStatus(StrEnum):
    OPEN = "open"  # members may join, and start a race
    RACING = "racing"
    CLOSED = "closed"  # idle too long, or a rated race's room after its race


class ArenaStatus(StrEnum):
    SCHEDULED = "scheduled"
    RUNNING = "running"
    FINISHED = "finished"
