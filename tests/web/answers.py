"""Every JSON answer the test clients receive, held to its model in app/web/api/schemas/.

The game state is written as plain data on the hot path (see that module): this check is what
keeps the data and the model the same thing. Each model forbids extra fields, so an answer with
a field the schema does not document, or without one it requires, fails the test that got it.
"""

from __future__ import annotations

import re

import httpx2 as httpx
from pydantic import BaseModel

from app.web.api.schemas.base import ErrorAnswer, PlayerCreated
from app.web.api.schemas.competition import (
    ChallengeStandingsAnswer,
    DailyAnswer,
    EventOut,
    EventsAnswer,
    EventStandingsAnswer,
    QueueAnswer,
    RaceBoardAnswer,
)
from app.web.api.schemas.game_state import GameState, HintAnswer, ReplayAnswer
from app.web.api.schemas.records import DealAnswer, LeaderboardAnswer, PlayerAnswer
from app.web.api.schemas.rooms import RoomAnswer

_SEGMENT = "[^/]+"
# (method, path pattern) → the model of a successful answer
_ROUTES: list[tuple[str, str, type[BaseModel]]] = [
    ("POST", "/api/players", PlayerCreated),
    ("GET", f"/api/players/{_SEGMENT}", PlayerAnswer),
    ("POST", "/api/games", GameState),
    ("GET", f"/api/games/{_SEGMENT}", GameState),
    ("POST", f"/api/games/{_SEGMENT}/(?:moves|undo|resign)", GameState),
    ("GET", f"/api/games/{_SEGMENT}/hint", HintAnswer),
    ("GET", f"/api/games/{_SEGMENT}/replay", ReplayAnswer),
    ("GET", f"/api/deals/{_SEGMENT}/{_SEGMENT}", DealAnswer),
    ("GET", "/api/leaderboard", LeaderboardAnswer),
    ("GET", "/api/daily", DailyAnswer),
    ("POST", "/api/rooms", RoomAnswer),
    ("GET", f"/api/rooms/{_SEGMENT}", RoomAnswer),
    ("POST", f"/api/rooms/{_SEGMENT}/(?:join|leave|start)", RoomAnswer),
    ("POST", f"/api/daily/{_SEGMENT}", GameState),
    ("GET", f"/api/daily/{_SEGMENT}/standings", ChallengeStandingsAnswer),
    ("POST", "/api/races/queue", QueueAnswer),
    ("GET", "/api/races/queue", QueueAnswer),
    ("GET", "/api/events", EventsAnswer),
    ("POST", f"/api/events/{_SEGMENT}/join", EventOut),
    ("POST", f"/api/events/{_SEGMENT}/next", GameState),
    ("GET", f"/api/events/{_SEGMENT}/standings", EventStandingsAnswer),
]
ROUTES = [(method, re.compile(f"^{path}$"), model) for method, path, model in _ROUTES]


def model_of(method: str, path: str, status: int) -> type[BaseModel] | None:
    if not path.startswith("/api/"):
        return None
    if status >= 400:
        return ErrorAnswer
    for m, pattern, model in ROUTES:
        if m == method and pattern.match(path):
            return model
    return None


def check_answer(response: httpx.Response) -> None:
    response.read()
    try:
        request = response.request
    except RuntimeError:  # a response made up by a test itself
        return
    if "json" not in response.headers.get("content-type", "") or not response.content:
        return
    model = model_of(request.method, request.url.path, response.status_code)
    if model is LeaderboardAnswer and response.json().get("board") == "races":
        model = RaceBoardAnswer
    if model is not None:
        model.model_validate(response.json())
