"""The JSON API (contract.md). Mutations need a bearer token; reading a game needs none, but a
reader who sends one is held to the same-deal rule (app/services/same_deal.py)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from app.engine import MAX_DEAL, Move
from app.services.errors import InvalidRequest
from app.services.games import GameView, MoveOutcome
from app.web.deps import ApiPlayer, ApiViewer, DealsDep, GamesDep, PlayersDep, SolverDep
from app.web.ratelimit import limit_player, limits_of

router = APIRouter(prefix="/api", tags=["api"])

MAX_VERSION = 2**31 - 1  # the game.version column is a 32-bit integer


class NewPlayer(BaseModel):
    name: StrictStr | None = Field(default=None, max_length=64)


class PlayerCreated(BaseModel):
    id: str
    name: str
    token: str


class NewGame(BaseModel):
    game: StrictStr = Field(max_length=64)
    deal: StrictInt | None = Field(
        default=None,
        ge=1,
        le=MAX_DEAL,
        description="A chosen deal number makes a casual game; without one the server draws "
        "the deal and the game is rated.",
    )
    winnable: StrictBool = False  # a deal from the certified pool (a casual game)


class MoveRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: StrictStr = Field(alias="from", min_length=1, max_length=16)
    to: StrictStr = Field(min_length=1, max_length=16)
    count: StrictInt = Field(default=1, ge=1, le=1000)
    version: StrictInt = Field(ge=0, le=MAX_VERSION)


class VersionRequest(BaseModel):
    """The optional body of undo and resign: the version the client saw."""

    model_config = ConfigDict(extra="forbid")

    version: StrictInt | None = Field(default=None, ge=0, le=MAX_VERSION)


IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=100)]


@router.post("/players", status_code=201, response_model=PlayerCreated)
def create_player(
    request: Request, players: PlayersDep, body: NewPlayer | None = None
) -> PlayerCreated:
    limits_of(request).hit_address(request, limits_of(request).new_players)
    player, token = players.create_api_player(body.name if body else None)
    return PlayerCreated(id=player.id, name=player.name, token=token)


def state_response(view: GameView, status: int = 200) -> JSONResponse:
    # A game state is plain JSON already: handing it straight to the response skips FastAPI's
    # generic encoder, which costs more than the move itself.
    return JSONResponse(view.to_json(), status_code=status)


GAME_STATE: dict[int | str, dict[str, Any]] = {
    200: {"description": "The game state (contract.md, Game state)."}
}


@router.post("/games", status_code=201, response_class=JSONResponse, responses=GAME_STATE)
def start_game(
    request: Request, body: NewGame, player: ApiPlayer, games: GamesDep, solver: SolverDep
) -> JSONResponse:
    limit_player(request, "games", player)
    if body.winnable:
        if body.deal is not None:
            raise InvalidRequest("Ask for a deal number or for a winnable deal, not both.")
        return state_response(solver.start_winnable(player, body.game), 201)
    return state_response(games.start(player, body.game, body.deal), 201)


class HintAnswer(BaseModel):
    move: dict[str, Any] | None = Field(description='{"from", "to", "count"}, or null')
    outcome: str = Field(description="winnable, lost or unknown")
    exact: bool = Field(description="true: nothing is hidden and the outcome is the solver's")
    message: str
    version: int = Field(description="the game version the hint is for")
    hints_used: int
    casual: bool = Field(description="a hinted game is casual from the first hint on")


@router.get("/games/{game_id}/hint", response_model=HintAnswer)
async def game_hint(game_id: str, player: ApiPlayer, solver: SolverDep) -> dict[str, Any]:
    """A hint for the caller's own game in play (contract.md, Solver). Hints never use
    hidden cards; the game is casual from its first hint on."""
    return await solver.hint(game_id, player)


@router.get("/games/{game_id}", response_class=JSONResponse, responses=GAME_STATE)
def read_game(game_id: str, games: GamesDep, viewer: ApiViewer) -> JSONResponse:
    """A game as the caller may see it: ``403 same_deal_in_play`` while the caller has an
    unfinished game of the same deal; a finished game's every card and move log only for its
    owner and for players who have finished a game of its deal."""
    return state_response(games.get(game_id, viewer))


@router.post("/games/{game_id}/moves", response_class=JSONResponse, responses=GAME_STATE)
def play_move(
    request: Request,
    game_id: str,
    body: MoveRequest,
    player: ApiPlayer,
    games: GamesDep,
    idempotency_key: IdempotencyKey = None,
) -> JSONResponse:
    limit_player(request, "moves", player)
    outcome = games.move(
        game_id, player, Move(body.from_, body.to, body.count), body.version, idempotency_key
    )
    return outcome_response(outcome)


def outcome_response(outcome: MoveOutcome) -> JSONResponse:
    if outcome.replayed is not None:
        return JSONResponse(outcome.replayed, headers={"Idempotent-Replayed": "true"})
    return state_response(outcome.view)


@router.post("/games/{game_id}/undo", response_class=JSONResponse, responses=GAME_STATE)
def undo(
    request: Request,
    game_id: str,
    player: ApiPlayer,
    games: GamesDep,
    body: VersionRequest | None = None,
    idempotency_key: IdempotencyKey = None,
) -> JSONResponse:
    """Takes back the latest move; ``{"version": n}`` makes it conditional (409
    ``stale_version``), an ``Idempotency-Key`` makes a retry safe."""
    limit_player(request, "moves", player)
    version = body.version if body else None
    return outcome_response(games.undo(game_id, player, version, idempotency_key))


@router.post("/games/{game_id}/resign", response_class=JSONResponse, responses=GAME_STATE)
def resign(
    request: Request,
    game_id: str,
    player: ApiPlayer,
    games: GamesDep,
    body: VersionRequest | None = None,
    idempotency_key: IdempotencyKey = None,
) -> JSONResponse:
    """Ends the game as lost; ``version`` and ``Idempotency-Key`` as for undo."""
    limit_player(request, "moves", player)
    version = body.version if body else None
    return outcome_response(games.resign(game_id, player, version, idempotency_key))


@router.get("/deals/{game}/{number}")
def deal_summary(game: str, number: str, deals: DealsDep, viewer: ApiViewer) -> dict[str, Any]:
    return deals.summary(game, number, viewer).to_json()
