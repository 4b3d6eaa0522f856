"""The tables, one module per part of the app (base, games, stats, solver, rooms, competition).

Every table is imported here, so that ``Base.metadata`` (Alembic, the tests) holds them all.
"""

from app.db.models.base import AppMeta, Base, UTCDateTime, as_utc
from app.db.models.competition import (
    Arena,
    ArenaGame,
    ArenaPlayer,
    Challenge,
    CompetitionDeal,
    QueuedRacer,
    RaceRating,
    RatingChange,
)
from app.db.models.games import Game, MoveRecord, Player
from app.db.models.rooms import Event, Race, Room, RoomMember
from app.db.models.solver import DealVerdict, GameCoach, GameHint
from app.db.models.stats import ALL_GAMES, DailyStats, DealStats, GameDailyStats, PlayerStats

__all__ = [
    "ALL_GAMES",
    "AppMeta",
    "Arena",
    "ArenaGame",
    "ArenaPlayer",
    "Base",
    "Challenge",
    "CompetitionDeal",
    "DailyStats",
    "DealStats",
    "DealVerdict",
    "Event",
    "Game",
    "GameCoach",
    "GameDailyStats",
    "GameHint",
    "MoveRecord",
    "Player",
    "PlayerStats",
    "QueuedRacer",
    "Race",
    "RaceRating",
    "RatingChange",
    "Room",
    "RoomMember",
    "UTCDateTime",
    "as_utc",
]
