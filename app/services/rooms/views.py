"""What the rooms hand the web: a room, a live room, a race result; the room codes; the limits."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from app.engine import Status
from app.services.rooms.events import RaceView
from app.services.statuses import RoomStatus

# No 0/O, 1/I/L, 5/S or 2/Z: a code read aloud or copied by hand comes out right.
CODE_ALPHABET = "ABCDEFGHJKMNPQRTUVWXY346789"
CODE_LENGTH = 6
CODE_RE = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")

OPEN, RACING, CLOSED = RoomStatus.OPEN, RoomStatus.RACING, RoomStatus.CLOSED
PLAYING_WINDOW_S = 300  # "playing now": moved within the last five minutes
PLAYING_CACHE_S = 15
EVENT_PAGE = 500  # events read from the table at a time for a client catching up
# The largest event id there can be: ``event.id`` is an INTEGER, 32 bits on PostgreSQL. A
# cursor beyond it is refused before any query (PostgreSQL would fail to cast it).
EVENT_ID_MAX = 2**31 - 1
PRUNE_BATCH = 20_000  # events one sweep deletes at most (a sweep every 15 s: 80k a minute)


def normalize_code(code: str) -> str | None:
    """A room code as typed (any case, spaces around) → its canonical form, or None."""
    if not isinstance(code, str):
        return None
    code = code.strip().upper()
    return code if CODE_RE.fullmatch(code) else None


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


@dataclass(frozen=True)
class Limits:
    countdown_s: float = 3.0
    max_members: int = 8
    rooms_per_player: int = 3
    idle_s: float = 1800.0
    forfeit_s: float = 300.0
    event_retention_s: float = 86_400.0


@dataclass(frozen=True)
class RoomView:
    code: str
    game: str
    status: str
    created_by: str
    players: list[dict[str, str]]  # {"id", "name"}, in the order they joined
    race: RaceView | None  # the latest race
    race_id: int | None = None

    @property
    def url(self) -> str:
        return f"/rooms/{self.code}"

    def is_member(self, player_id: str | None) -> bool:
        return any(p["id"] == player_id for p in self.players)

    def racing(self, player_id: str | None) -> bool:
        """Whether ``player_id`` has a game in this room's race that is still being played."""
        if self.race is None or player_id is None:
            return False
        names = {p["id"]: p["name"] for p in self.players}
        name = names.get(player_id)
        return any(s.player == name and s.status == Status.PLAYING for s in self.race.standings)


@dataclass(frozen=True)
class LiveRoom:
    code: str
    game: str
    status: str
    players: int


@dataclass(frozen=True)
class RaceResult:
    room: str
    number: int
    game: str
    deal: int
    game_id: str
    place: int
    racers: int
    status: str
    # A rated race's change of the player's race rating (shown ratings, mu - 3 sigma), so each
    # change on a player page leads to its race; None for a casual race.
    rating_before: float | None = None
    rating_after: float | None = None
