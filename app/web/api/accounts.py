"""Players' data (contract v3, Accounts): ``GET /api/me/export`` and ``DELETE /api/me``. The
browser's twins are in app/web/pages/accounts.py."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, Field

from app.web.api.schemas.base import errors_of
from app.web.deps import AccountsDep, ApiPlayer, PlayersDep
from app.web.download import json_download

router = APIRouter()


class DeleteMe(BaseModel):
    password: str | None = Field(default=None, max_length=300)


class Deleted(BaseModel):
    deleted: bool
    name: str


@router.get("/api/me/export", tags=["api"], responses=errors_of(401))
def export_me(player: ApiPlayer, accounts: AccountsDep) -> Response:
    """Everything stored about the caller, as one JSON document."""
    return json_download(accounts.export(player))


@router.delete("/api/me", tags=["api"], response_model=Deleted, responses=errors_of(401, 422))
def delete_me(
    player: ApiPlayer, accounts: AccountsDep, players: PlayersDep, body: DeleteMe | None = None
) -> Deleted:
    """Deletes the caller's personal data (the password is needed when one is set): the name
    becomes a ghost name, the password, token and sessions go, the games stay anonymous."""
    ghost = accounts.delete_own(player, body.password if body else None)
    players.forget(player)
    return Deleted(deleted=True, name=ghost)
