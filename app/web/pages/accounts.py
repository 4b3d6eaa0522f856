"""The account page's data actions: ``GET /account/export`` and ``POST /account/delete``
(CSRF-checked like every form). The API's twins are in app/web/api/accounts.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from app.services.errors import ServiceError
from app.web.deps import AccountsDep, PlayersDep, ViewerDep
from app.web.download import json_download
from app.web.i18n import gettext as _
from app.web.pages.templating import render
from app.web.words import service_message

router = APIRouter()


@router.get("/account/export", include_in_schema=False)
def export_page(viewer: ViewerDep, accounts: AccountsDep) -> Response:
    if viewer is None:
        answer = {"error": {"code": "no_player", "message": _("You have no data yet.")}}
        return JSONResponse(answer, 404)
    return json_download(accounts.export(viewer))


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
        message = _('Tick "Yes, delete my account" to delete it: nothing was deleted.')
        return render(
            request,
            "pages/error.html",
            {"title": _("Account not deleted"), "message": message},
            422,
        )
    try:
        accounts.delete_own(viewer, password or None)
    except ServiceError as exc:
        context = {"title": _("Account not deleted"), "message": service_message(exc)}
        return render(request, "pages/error.html", context, exc.status)
    players.forget(viewer)
    request.session.clear()
    return render(
        request,
        "pages/error.html",
        {
            "title": _("Your account is deleted"),
            "message": _(
                "Your name, password and sessions are gone. Your games stay on the deal "
                "pages and in races as an anonymous player's."
            ),
        },
    )
