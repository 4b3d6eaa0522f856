"""Browser play: start a game, move, undo, resign.

With ``HX-Request`` the answer is a fragment of only the piles that changed (out-of-band swaps)
plus the status; without it, a 303 back to the board, so play works with JavaScript off.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from app.engine import InvalidMove, Move
from app.services.errors import ServiceError
from app.services.games import GameView
from app.web.board import pile_views, status_context
from app.web.deps import BrowserPlayer, GamesDep
from app.web.htmx import is_htmx, vary_on_htmx
from app.web.templating import render

router = APIRouter()


@router.post("/games")
def start(
    request: Request,
    player: BrowserPlayer,
    games: GamesDep,
    game: Annotated[str, Form(max_length=64)],
    deal: Annotated[str, Form(max_length=20)] = "",
) -> Response:
    number = int(deal) if deal.strip().isdigit() else None
    if deal.strip() and number is None:
        return render(
            request,
            "pages/error.html",
            {"title": "No such deal", "message": "A deal number is a whole number."},
            422,
        )
    view = games.start(player, game, number)
    return RedirectResponse(f"/games/{view.record.id}", status_code=303)


def _answer(
    request: Request,
    game_id: str,
    view: GameView | None,
    error: str | None,
    status: int = 200,
    games: GamesDep | None = None,
) -> Response:
    """The HTMX fragment or the no-JavaScript redirect for a board action."""
    if not is_htmx(request):
        if error:
            request.session["flash"] = error
        return vary_on_htmx(RedirectResponse(f"/games/{game_id}", status_code=303))
    if view is None:
        assert games is not None
        view = games.get(game_id)
        changed = None  # after a refusal the whole board is sent, so it is right again
    else:
        # A finished game shows every card, so the whole board is sent again.
        changed = view.step.changed if view.step and not view.finished else None
    response = render(
        request,
        "components/move_response.html",
        {
            "piles": pile_views(view, changed),
            "status": status_context(view),
            "error": error,
            "announce": error or _announce(view),
        },
        status,
    )
    return vary_on_htmx(response)


def _announce(view: GameView) -> str:
    step = view.step
    if step is None:
        return ""
    return f"Played {step.move}."


def _parse_move(move: str | None, source: str | None, target: str | None, count: str) -> Move:
    """The move from either a notation field (``t2-t7/3``) or from/to/count fields."""
    if move:
        return Move.parse(move)
    if not source or not target:
        raise InvalidMove("Say which pile to move from and which pile to move to.")
    if not count.strip().isdigit() or not 1 <= int(count) <= 1000:
        raise InvalidMove("The number of cards to move must be a whole number from 1.")
    return Move(source, target, int(count))


@router.post("/games/{game_id}/moves")
def move(
    request: Request,
    game_id: str,
    player: BrowserPlayer,
    games: GamesDep,
    version: Annotated[int, Form(ge=0)],
    from_: Annotated[str | None, Form(alias="from", max_length=16)] = None,
    to: Annotated[str | None, Form(max_length=16)] = None,
    count: Annotated[str, Form(max_length=6)] = "1",
    notation: Annotated[str | None, Form(alias="move", max_length=24)] = None,
) -> Response:
    try:
        outcome = games.move(game_id, player, _parse_move(notation, from_, to, count), version)
    except InvalidMove as exc:
        return _answer(request, game_id, None, str(exc), 422, games)
    except ServiceError as exc:
        if exc.status in (403, 404):
            raise
        return _answer(request, game_id, None, exc.message, exc.status, games)
    return _answer(request, game_id, outcome.view, None)


@router.post("/games/{game_id}/undo")
def undo(request: Request, game_id: str, player: BrowserPlayer, games: GamesDep) -> Response:
    try:
        view = games.undo(game_id, player)
    except ServiceError as exc:
        if exc.status in (403, 404):
            raise
        return _answer(request, game_id, None, exc.message, exc.status, games)
    return _answer(request, game_id, view, None)


@router.post("/games/{game_id}/resign")
def resign(request: Request, game_id: str, player: BrowserPlayer, games: GamesDep) -> Response:
    try:
        view = games.resign(game_id, player)
    except ServiceError as exc:
        if exc.status in (403, 404):
            raise
        return _answer(request, game_id, None, exc.message, exc.status, games)
    return _answer(request, game_id, view, None)
