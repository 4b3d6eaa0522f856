"""Players' data (contract v3, Accounts): ``GET /api/me/export``, ``DELETE /api/me``, and the
browser's ``GET /account/export`` and ``POST /account/delete`` (CSRF-checked like every form)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from app.services.accounts import Accounts
from app.services.errors import Banned, ServiceError
from app.web.deps import ApiPlayer, PlayersDep, ViewerDep
from app.web.schemas import errors_of
from app.web.templating import render

router = APIRouter()


async def get_accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


AccountsDep = Annotated[Accounts, Depends(get_accounts)]


def refuse_rated_if_banned(accounts: Accounts, player_id: str) -> None:
    """A banned player cannot start a rated game (an operator's ban)."""
    if accounts.is_banned(player_id):
        raise Banned("An operator has banned this player: rated games are closed to you.")


class DeleteMe(BaseModel):
    password: str | None = Field(default=None, max_length=300)


class Deleted(BaseModel):
    deleted: bool
    name: str


def _download(data: dict[str, Any]) -> Response:
    return Response(
        json.dumps(data, indent=1, ensure_ascii=False),
        media_type="application/json",
        headers={
            "content-disposition": 'attachment; filename="patience-hall-my-data.json"',
            "cache-control": "no-store",
        },
    )


@router.get("/api/me/export", tags=["api"], responses=errors_of(401))
def export_me(player: ApiPlayer, accounts: AccountsDep) -> Response:
    """Everything stored about the caller, as one JSON document."""
    return _download(accounts.export(player))


@router.delete("/api/me", tags=["api"], response_model=Deleted, responses=errors_of(401, 422))
def delete_me(
    player: ApiPlayer, accounts: AccountsDep, players: PlayersDep, body: DeleteMe | None = None
) -> Deleted:
    """Deletes the caller's personal data (the password is needed when one is set): the name
    becomes a ghost name, the password, token and sessions go, the games stay anonymous."""
    ghost = accounts.delete_own(player, body.password if body else None)
    players.forget(player)
    return Deleted(deleted=True, name=ghost)


@router.get("/account/export", include_in_schema=False)
def export_page(viewer: ViewerDep, accounts: AccountsDep) -> Response:
    if viewer is None:
        answer = {"error": {"code": "no_player", "message": "You have no data yet."}}
        return JSONResponse(answer, 404)
    return _download(accounts.export(viewer))


@router.post("/account/delete", include_in_schema=False)
def delete_account(
    request: Request,
    viewer: ViewerDep,
    accounts: AccountsDep,
    players: PlayersDep,
    confirm: Annotated[str, Form(max_length=16)] = "",
    password: Annotated[str, Form(max_length=300)] = "",
) -> Response:
    if viewer is None:
        return RedirectResponse("/account", status_code=303)
    if confirm != "delete":
        message = 'Tick "Yes, delete my account" to delete it: nothing was deleted.'
        return render(
            request, "pages/error.html", {"title": "Account not deleted", "message": message}, 422
        )
    try:
        accounts.delete_own(viewer, password or None)
    except ServiceError as exc:
        context = {"title": "Account not deleted", "message": exc.message}
        return render(request, "pages/error.html", context, exc.status)
    players.forget(viewer)
    request.session.clear()
    return render(
        request,
        "pages/error.html",
        {
            "title": "Your account is deleted",
            "message": "Your name, password and sessions are gone. Your games stay on the deal "
            "pages and in races as an anonymous player's.",
        },
    )
