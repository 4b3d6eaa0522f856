"""The rooms API (contract v2, "Rooms and races"): create, read, join, leave, start."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field

from app.web.api.schemas.base import GameSlug, JSONBytes, answer, errors_of
from app.web.api.schemas.rooms import RoomAnswer, room_answer
from app.web.deps import ApiPlayer, RoomsDep
from app.web.http.ratelimit import limit_costly

router = APIRouter(prefix="/api/rooms", tags=["rooms"])


class NewRoom(BaseModel):
    game: GameSlug = Field(description="The game every race here plays.")


# A room code as typed: any case, spaces around (app/services/rooms.normalize_code).
RoomCode = Annotated[str, Path(max_length=32)]
CHANGE = errors_of(401, 403, 404, 409)
JOIN = errors_of(401, 403, 404, 409, 429)  # joins and leaves are rate limited


@router.post("", status_code=201, response_model=RoomAnswer, responses=errors_of(401, 409))
def create_room(body: NewRoom, player: ApiPlayer, rooms: RoomsDep) -> JSONBytes:
    return answer(room_answer(rooms.create(player, body.game)), 201)


@router.get("/{code}", response_model=RoomAnswer, responses=errors_of(404))
def read_room(code: RoomCode, rooms: RoomsDep) -> JSONBytes:
    return answer(room_answer(rooms.get(code)))


@router.post("/{code}/join", response_model=RoomAnswer, responses=JOIN)
def join_room(request: Request, code: RoomCode, player: ApiPlayer, rooms: RoomsDep) -> JSONBytes:
    limit_costly(request, "room-joins", player)
    return answer(room_answer(rooms.join(code, player)))


@router.post("/{code}/leave", response_model=RoomAnswer, responses=JOIN)
def leave_room(request: Request, code: RoomCode, player: ApiPlayer, rooms: RoomsDep) -> JSONBytes:
    limit_costly(request, "room-joins", player)
    return answer(room_answer(rooms.leave(code, player)))


@router.post("/{code}/start", response_model=RoomAnswer, responses=CHANGE)
def start_race(code: RoomCode, player: ApiPlayer, rooms: RoomsDep) -> JSONBytes:
    """A race on one drawn deal, one casual game per member; moves before ``starts_at`` get
    ``409 race_not_started``. After a race has ended, a rematch on a new deal."""
    return answer(room_answer(rooms.start(code, player)))
