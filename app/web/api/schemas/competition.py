"""The competition's answers: the daily challenge, the race queue and race ratings, events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.services.arena_standings import ArenaStanding
from app.services.arenas import ArenaView
from app.services.challenge import ChallengeStatus, Standings
from app.services.race_queue import QueueState
from app.services.ratings import RatingRow
from app.web.api.schemas.base import Answer, GameSlug
from app.web.api.schemas.rooms import RoomAnswer, room_answer


class ChallengeOut(Answer):
    date: str = Field(description="The UTC date of the challenge, ISO 8601.")
    starts_at: str = Field(description="ISO 8601: the UTC day's start.")
    ends_at: str = Field(description="ISO 8601: the UTC day's end (the seal lifts then).")
    your_game: str | None = Field(description="The caller's challenge game today, if started.")
    streak: int = Field(description="Consecutive UTC days with a win of this challenge.")


class DailyAnswer(Answer):
    date: str = Field(description="The UTC date, ISO 8601.")
    deals: dict[GameSlug, int] = Field(description="Today's deal number of each game.")
    challenge: dict[GameSlug, ChallengeOut] = Field(
        description="Each game's daily challenge for the caller (a deal of their own)."
    )


class StandingOut(Answer):
    rank: int | None = Field(description="Wins only, by moves over par then active time.")
    player: str
    status: Literal["playing", "won", "lost"]
    moves: int
    par: int
    over_par: int | None = Field(description="Moves over par, for a win.")
    active_ms: int
    game: str | None = Field(
        description="The game's id: once the day is over, for the day's best games (replays)."
    )


class ChallengeStandingsAnswer(Answer):
    game: GameSlug
    date: str
    ends_at: str
    final: bool = Field(description="The day is over: the standings are final.")
    standings: list[StandingOut]


def challenge_out(status: ChallengeStatus) -> dict[str, Any]:
    return {
        "date": status.day.isoformat(),
        "starts_at": status.starts_at.isoformat(),
        "ends_at": status.ends_at.isoformat(),
        "your_game": status.your_game,
        "streak": status.streak,
    }


def challenge_standings(standings: Standings) -> ChallengeStandingsAnswer:
    return ChallengeStandingsAnswer.model_validate(
        {
            "game": standings.game,
            "date": standings.day.isoformat(),
            "ends_at": standings.ends_at.isoformat(),
            "final": standings.closed,
            "standings": [
                {
                    "rank": r.rank,
                    "player": r.player,
                    "status": r.status,
                    "moves": r.moves,
                    "par": r.par,
                    "over_par": r.over_par,
                    "active_ms": r.active_ms,
                    "game": r.game_id,
                }
                for r in standings.rows
            ],
        }
    )


class RaceBoardRow(Answer):
    rank: int
    player: str
    rating: float
    mu: float
    sigma: float
    races: int


class RaceBoardAnswer(Answer):
    game: GameSlug
    board: Literal["races"]
    rows: list[RaceBoardRow]


def race_board_answer(slug: str, rows: list[RatingRow]) -> RaceBoardAnswer:
    return RaceBoardAnswer.model_validate(
        {"game": slug, "board": "races", "rows": [vars(r) for r in rows]}
    )


class QueueAnswer(Answer):
    queued: bool = Field(description="Waiting for a race (false once one is formed).")
    game: GameSlug | None
    joined_at: str | None
    waiting: int = Field(description="Players waiting for this game's race now.")
    room: RoomAnswer | None = Field(description="The rated race formed for the caller.")


def queue_answer(state: QueueState) -> QueueAnswer:
    return QueueAnswer.model_validate(
        {
            "queued": state.queued,
            "game": state.game,
            "joined_at": None if state.joined_at is None else state.joined_at.isoformat(),
            "waiting": state.waiting,
            "room": None if state.room is None else room_answer(state.room).model_dump(),
        }
    )


# -- events (arenas) --------------------------------------------------------------------------


class EventOut(Answer):
    id: int
    game: GameSlug
    starts_at: str
    ends_at: str
    status: Literal["scheduled", "running", "finished"]
    players: int


class EventsAnswer(Answer):
    events: list[EventOut]


class EventStandingOut(Answer):
    rank: int
    player: str
    points: int
    wins: int
    games: int = Field(description="Finished games.")
    active_ms: int
    streak: int = Field(description="Wins in a row now: the next win scores double from 2.")


class EventStandingsAnswer(Answer):
    event: EventOut
    standings: list[EventStandingOut]


def event_out(view: ArenaView) -> dict[str, Any]:
    return {
        "id": view.id,
        "game": view.game,
        "starts_at": view.starts_at.isoformat(),
        "ends_at": view.ends_at.isoformat(),
        "status": view.status,
        "players": view.players,
    }


def event_standings_answer(view: ArenaView, rows: list[ArenaStanding]) -> EventStandingsAnswer:
    return EventStandingsAnswer.model_validate(
        {"event": event_out(view), "standings": [vars(r) for r in rows]}
    )
