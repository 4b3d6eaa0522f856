"""Rooms and their races."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.services.rooms.views import RoomView
from app.web.api.schemas.base import Answer, GameSlug, PlayerRef

# -- rooms and races ------------------------------------------------------------------------


class Standing(Answer):
    place: int
    player: str
    game: str = Field(description="The racer's game id.")
    status: Literal["playing", "won", "lost"]
    moves: int
    foundation_cards: int
    time_ms: int | None = Field(description="From the start to the win.")


class RaceOut(Answer):
    number: int = Field(description="The race's number in its room.")
    game: GameSlug
    deal: int | None = Field(description="The deal number: null until the race ends (sealed).")
    starts_at: str = Field(description="ISO 8601: moves before it get 409 race_not_started.")
    status: Literal["running", "finished"]
    finished_at: str | None
    games: dict[str, str] = Field(description="Player name → game id.")
    standings: list[Standing]
    rated: bool = Field(
        default=False, description="Formed by the server from the race queue: it is rated."
    )


class RoomAnswer(Answer):
    code: str
    url: str = Field(description="The shared link, /rooms/{code}.")
    game: GameSlug
    status: Literal["open", "racing", "closed"]
    players: list[PlayerRef] = Field(description="Members, in the order they joined.")
    race: RaceOut | None = Field(description="The latest race, if any.")


def room_answer(room: RoomView) -> RoomAnswer:
    return RoomAnswer.model_validate(
        {
            "code": room.code,
            "url": room.url,
            "game": room.game,
            "status": room.status,
            "players": room.players,
            "race": None if room.race is None else room.race.event_data(),  # as its events carry it
        }
    )
