"""The rooms API (contract v2, "Rooms and races"): create, read, join, leave, start."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StrictStr

from app.services.rooms import Rooms
from app.web.deps import ApiPlayer

router = APIRouter(prefix="/api/rooms", tags=["rooms"])


async def get_rooms(request: Request) -> Rooms:
    rooms: Rooms = request.app.state.rooms
    return rooms


RoomsDep = Annotated[Rooms, Depends(get_rooms)]


class NewRoom(BaseModel):
    game: StrictStr = Field(max_length=64, description="The game slug every race here plays.")


ROOM: dict[int | str, dict[str, Any]] = {
    200: {"description": 'The room: {"code", "url", "game", "status", "players", "race"}.'}
}


@router.post("", status_code=201, response_class=JSONResponse, responses=ROOM)
def create_room(body: NewRoom, player: ApiPlayer, rooms: RoomsDep) -> JSONResponse:
    return JSONResponse(rooms.create(player, body.game).to_json(), status_code=201)


@router.get("/{code}", response_class=JSONResponse, responses=ROOM)
def read_room(code: str, rooms: RoomsDep) -> JSONResponse:
    return JSONResponse(rooms.get(code).to_json())


@router.post("/{code}/join", response_class=JSONResponse, responses=ROOM)
def join_room(code: str, player: ApiPlayer, rooms: RoomsDep) -> JSONResponse:
    return JSONResponse(rooms.join(code, player).to_json())


@router.post("/{code}/leave", response_class=JSONResponse, responses=ROOM)
def leave_room(code: str, player: ApiPlayer, rooms: RoomsDep) -> JSONResponse:
    return JSONResponse(rooms.leave(code, player).to_json())


@router.post("/{code}/start", response_class=JSONResponse, responses=ROOM)
def start_race(code: str, player: ApiPlayer, rooms: RoomsDep) -> JSONResponse:
    """A race on one drawn deal, one casual game per member; moves before ``starts_at`` get
    ``409 race_not_started``. After a race has ended, a rematch on a new deal."""
    return JSONResponse(rooms.start(code, player).to_json())
