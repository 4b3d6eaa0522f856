"""The JSON API (contract.md). Mutations need a bearer token; reading a game needs none, but a
reader who sends one is held to the same-deal rule (app/services/same_deal.py)."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Header, Path, Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from app.engine import MAX_DEAL, Move
from app.services.errors import InvalidRequest
from app.services.game_views import MoveOutcome
from app.web.api.schemas.base import (
    PILE_ID,
    GameSlug,
    JSONBytes,
    PlayerCreated,
    WholeNumber,
    answer,
    errors_of,
    whole_between,
)
from app.web.api.schemas.game_state import (
    AnalysisAnswer,
    GameState,
    HintAnswer,
    hint_answer,
    state_response,
)
from app.web.api.schemas.records import DealAnswer, deal_answer
from app.web.deps import (
    AccountsDep,
    ApiPlayer,
    ApiViewer,
    DealsDep,
    GamesDep,
    PlayersDep,
    SolverDep,
    api_player_id,
)
from app.web.direct import binds, media_type
from app.web.http.ratelimit import limit_costly, limit_player, limit_player_async, limits_of
from app.web.state import services_of
from app.web.words import hint_message

router = APIRouter(prefix="/api", tags=["api"])

MAX_VERSION = 2**31 - 1  # the game.version column is a 32-bit integer


class NewPlayer(BaseModel):
    name: StrictStr | None = Field(
        default=None,
        max_length=64,
        description="3 to 24 letters, digits, `_` and `-`, unique whatever the case. "
        "Compatibility forms (full-width letters) are accepted and stored normalized (NFKC).",
        # The rule clients are told; the service checks it after NFKC normalization, so the
        # model only bounds the length (a full-width name is longer in UTF-8, not in text).
        json_schema_extra={"pattern": "^[A-Za-z0-9_-]{3,24}$"},
    )


class NewGame(BaseModel):
    # The schema says what the handler refuses: a deal number and a winnable deal together.
    model_config = ConfigDict(
        json_schema_extra={
            "not": {
                "required": ["deal", "winnable"],
                "properties": {"deal": {"type": "integer"}, "winnable": {"const": True}},
            }
        }
    )

    game: GameSlug
    deal: whole_between(1, MAX_DEAL) | None = Field(  # type: ignore[valid-type]
        default=None,
        description="A chosen deal number makes a casual game; without one the server draws "
        "the deal and the game is rated.",
    )
    winnable: StrictBool = False  # a deal from the certified pool (a casual game)


class MoveRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: StrictStr = Field(alias="from", min_length=1, max_length=16, pattern=PILE_ID)
    to: StrictStr = Field(min_length=1, max_length=16, pattern=PILE_ID)
    count: WholeNumber = Field(default=1, ge=1, le=1000)
    version: WholeNumber = Field(ge=0, le=MAX_VERSION)


class VersionRequest(BaseModel):
    """The optional body of undo and resign: the version the client saw."""

    model_config = ConfigDict(extra="forbid")

    version: whole_between(0, MAX_VERSION) | None = None  # type: ignore[valid-type]


IDEMPOTENCY_KEY_MAX = 100  # characters; bind_play_move takes what this declaration takes
IdempotencyKey = Annotated[
    str | None, Header(alias="Idempotency-Key", min_length=1, max_length=IDEMPOTENCY_KEY_MAX)
]
# Any text: an id that names no game is 404 not_found (contract.md), not a malformed request.
GameId = Annotated[str, Path(description="The game's id (22 URL-safe characters).")]
REPLAYED = {
    "Idempotent-Replayed": {
        "description": "`true` when this is the stored first answer to a retried request "
        "(same Idempotency-Key).",
        "schema": {"type": "string"},
    }
}
# A game state answer, and the refusals of routes that read or change one game.
CHANGE = errors_of(401, 403, 404, 409, 429)


@router.post(
    "/players", status_code=201, response_model=PlayerCreated, responses=errors_of(409, 429)
)
def create_player(
    request: Request, players: PlayersDep, body: NewPlayer | None = None
) -> PlayerCreated:
    limits_of(request).hit_address(request, limits_of(request).new_players)
    player, token = players.create_api_player(body.name if body else None)
    return PlayerCreated(id=player.id, name=player.name, token=token)


@router.post(
    "/games", status_code=201, response_model=GameState, responses=errors_of(401, 404, 409, 429)
)
def start_game(
    request: Request,
    body: NewGame,
    player: ApiPlayer,
    games: GamesDep,
    solver: SolverDep,
    accounts: AccountsDep,
) -> JSONBytes:
    limit_player(request, "games", player)
    if body.winnable:
        if body.deal is not None:
            raise InvalidRequest("Ask for a deal number or for a winnable deal, not both.")
        return state_response(solver.start_winnable(player, body.game), 201)
    if body.deal is None:
        accounts.refuse_rated_if_banned(player)
    return state_response(games.start(player, body.game, body.deal), 201)


@router.get(
    "/games/{game_id}/hint",
    response_model=HintAnswer,
    responses=errors_of(401, 403, 404, 409, 429),
)
async def game_hint(
    request: Request, game_id: GameId, player: ApiPlayer, solver: SolverDep
) -> JSONBytes:
    """A hint for the caller's own game in play (contract.md, Solver). Hints never use
    hidden cards; the game is casual from its first hint on."""
    limit_costly(request, "hints", player)
    given = await solver.hint(game_id, player)
    # The message in the caller's language (Accept-Language).
    return answer(hint_answer(given, hint_message(given)))


@router.get(
    "/games/{game_id}/analysis",
    response_model=AnalysisAnswer,
    responses=errors_of(401, 403, 404, 409, 429),
)
async def game_analysis(
    request: Request, game_id: GameId, viewer: ApiViewer, solver: SolverDep
) -> JSONBytes:
    """Where a finished game slipped (contract v3): for whoever may see its solution (the
    owner, or a player who has finished the deal; subject to the seal)."""
    limit_costly(request, "analyses", viewer)
    return answer(AnalysisAnswer.model_validate(await solver.analysis(game_id, viewer)))


@router.post(
    "/games/{game_id}/try-again",
    status_code=201,
    response_model=GameState,
    responses=errors_of(401, 403, 404, 409, 429),
)
async def try_again(
    request: Request, game_id: GameId, player: ApiPlayer, solver: SolverDep
) -> JSONBytes:
    """ "Try again from here": a new casual game of the finished game's deal, replayed to just
    before the slip its analysis names (409 ``no_slip`` when it names none)."""
    limit_player(request, "games", player)
    return state_response(await solver.try_again(game_id, player), 201)


@router.get("/games/{game_id}", response_model=GameState, responses=errors_of(401, 403, 404))
def read_game(game_id: GameId, games: GamesDep, viewer: ApiViewer) -> JSONBytes:
    """A game as the caller may see it: ``403 same_deal_in_play`` while the caller has an
    unfinished game of the same deal; a finished game's every card and move log only for its
    owner and for players who have finished a game of its deal."""
    return state_response(games.get(game_id, viewer))


@router.post(
    "/games/{game_id}/moves",
    response_model=GameState,
    responses={200: {"headers": REPLAYED}, **CHANGE},
)
async def play_move(
    request: Request,
    game_id: GameId,
    body: MoveRequest,
    player: ApiPlayer,
    games: GamesDep,
    idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """Plays a move (contract.md, Moves): ``422 illegal_move`` says why a move is refused,
    ``409 stale_version`` when ``version`` is not the current one."""
    # On the event loop, like its dependencies: no thread-pool hop (issue 26).
    await limit_player_async(request, "moves", player)
    outcome = await games.move_async(
        game_id, player, Move(body.from_, body.to, body.count), body.version, idempotency_key
    )
    return outcome_response(outcome)


@binds(play_move)
async def bind_play_move(request: Request) -> JSONBytes | None:
    """:func:`play_move` for a JSON body and a sane ``Idempotency-Key`` (app/web/direct.py);
    ``None``, before any dependency ran, for FastAPI's binding and its errors."""
    if media_type(request) != "application/json":
        return None
    key = request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX:
        return None
    try:
        body = MoveRequest.model_validate(json.loads(await request.body()))
    except Exception:  # not JSON, not a move, or not read (the client went away mid-body)
        return None
    services = services_of(request)
    player = await api_player_id(request, services.players)
    game_id = request.path_params["game_id"]
    return await play_move(request, game_id, body, player, services.games, key)


def outcome_response(outcome: MoveOutcome) -> JSONBytes:
    if outcome.replayed is not None:
        return JSONBytes(outcome.replayed, headers={"Idempotent-Replayed": "true"})
    if outcome.stored is not None:  # serialized once, for the log and for this answer
        return JSONBytes(outcome.stored)
    return state_response(outcome.view)


@router.post(
    "/games/{game_id}/undo",
    response_model=GameState,
    responses={200: {"headers": REPLAYED}, **CHANGE},
)
async def undo(
    request: Request,
    game_id: GameId,
    player: ApiPlayer,
    games: GamesDep,
    body: VersionRequest | None = None,
    idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """Takes back the latest move; ``{"version": n}`` makes it conditional (409
    ``stale_version``), an ``Idempotency-Key`` makes a retry safe."""
    await limit_player_async(request, "moves", player)
    version = body.version if body else None
    return outcome_response(await games.undo_async(game_id, player, version, idempotency_key))


@router.post(
    "/games/{game_id}/resign",
    response_model=GameState,
    responses={200: {"headers": REPLAYED}, **CHANGE},
)
async def resign(
    request: Request,
    game_id: GameId,
    player: ApiPlayer,
    games: GamesDep,
    body: VersionRequest | None = None,
    idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """Ends the game as lost; ``version`` and ``Idempotency-Key`` as for undo."""
    await limit_player_async(request, "moves", player)
    version = body.version if body else None
    return outcome_response(await games.resign_async(game_id, player, version, idempotency_key))


@router.get("/deals/{game}/{number}", response_model=DealAnswer, responses=errors_of(401, 404))
def deal_summary(
    game: GameSlug,
    number: Annotated[int, Path(ge=1, le=MAX_DEAL)],
    deals: DealsDep,
    viewer: ApiViewer,
) -> JSONBytes:
    """A deal's record: how everyone has fared on it (the same-deal rule decides whether the
    finished games' replays and the solver's verdict are shown)."""
    return answer(deal_answer(deals.summary(game, number, viewer)), exclude_unset=True)
