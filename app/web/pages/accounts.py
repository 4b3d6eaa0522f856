"""The account page, signing in and out, and the account's data actions: ``GET /account/export``
and ``POST /account/delete`` (CSRF-checked like every form).
The API's twins are in app/web/api/accounts.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from app.services.errors import BadCredentials, ServiceError
from app.services.players import check_name, name_key
from app.web import i18n
from app.web.deps import (
    SESSION_VERSION,
    AccountsDep,
    BrowserPlayer,
    PlayersDep,
    ViewerDep,
    new_browser_player,
    sign_session_in,
)
from app.web.download import json_download
from app.web.http.ratelimit import client_address, limits_of
from app.web.http.signin_guard import ProofRequired, SignInGuard, signin_guard_of
from app.web.i18n import gettext as _
from app.web.pages.prefs import set_lang_cookie, set_prefs_cookie
from app.web.pages.templating import render
from app.web.words import service_message

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema


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


@router.get("/account")
def account(request: Request, viewer: ViewerDep, players: PlayersDep) -> Response:
    return _account_page(request, viewer, players, request.session.pop("flash", None))


def _account_page(
    request: Request,
    viewer: str | None,
    players: PlayersDep,
    flash: str | None,
    error: str | None = None,
    status: int = 200,
    signin: dict[str, object] | None = None,
) -> Response:
    me = players.get(viewer) if viewer else None
    context = {
        "me": me,
        "has_password": bool(me and me.password_hash),
        "flash": flash,
        "flash_error": error,
        # After a refusal that asked for a proof of work: the name typed and a challenge for it
        # (static/js/signin.js starts the work at once).
        "signin": signin or {},
    }
    return render(request, "pages/account.html", context, status)


def _refused(request: Request, title: str, exc: ServiceError) -> Response:
    response = render(
        request, "pages/error.html", {"title": title, "message": service_message(exc)}, exc.status
    )
    response.headers.update(getattr(exc, "headers", {}))
    return response


def _back_to_account(request: Request, message: str) -> Response:
    request.session["flash"] = message
    return RedirectResponse("/account", status_code=303)


@router.post("/account/name")
def choose_name(
    request: Request,
    name: Annotated[str, Form(max_length=64)],
    viewer: ViewerDep,
    players: PlayersDep,
) -> Response:
    try:
        chosen = check_name(name.strip())  # before a visitor gets a player for it
        player = viewer or new_browser_player(request, players)
        players.rename(player, chosen)
    except ServiceError as exc:
        return _refused(request, i18n.gettext("Name not changed"), exc)
    return _back_to_account(request, i18n.say("You are now %(name)s.", name=chosen))


@router.post("/account/password")
def choose_password(
    request: Request,
    password: Annotated[str, Form(max_length=300)],
    player: BrowserPlayer,
    players: PlayersDep,
) -> Response:
    try:
        me = players.set_password(player, password)
    except ServiceError as exc:
        return _refused(request, i18n.gettext("Password not set"), exc)
    # Every other session of this player is revoked; this one stays signed in.
    request.session[SESSION_VERSION] = me.session_version
    # The owner is here: this address signs in as usual even while the name is under attack.
    signin_guard(request).remember(name_key(me.name), client_address(request))
    return _back_to_account(
        request,
        i18n.gettext(
            "Password set: you can now sign in on another device. Every other device you were "
            "signed in on is signed out."
        ),
    )


def signin_guard(request: Request) -> SignInGuard:
    return signin_guard_of(request)


@router.get("/signin/challenge", include_in_schema=False)
def signin_challenge(request: Request, name: Annotated[str, Query(max_length=64)] = "") -> Response:
    """Whether signing in as ``name`` from here needs a proof of work, and a challenge for it
    (static/js/signin.js asks before it sends the sign-in form). Changes nothing."""
    limits_of(request).hit_address(request)
    guard, key = signin_guard(request), name_key(name.strip())
    required = guard.under_attack(key) and not guard.is_known(key, client_address(request))
    body: dict[str, object] = {"required": required}
    if required:
        challenge = guard.challenge(key)
        body |= {
            "challenge": challenge.token,
            "nonce": challenge.nonce,
            "bits": challenge.bits,
            "expires_at": challenge.expires_at,
        }
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


@router.post("/signin")
def sign_in(
    request: Request,
    name: Annotated[str, Form(max_length=64)],
    password: Annotated[str, Form(max_length=300)],
    players: PlayersDep,
    viewer: ViewerDep,
    challenge: Annotated[str, Form(max_length=200)] = "",
    proof: Annotated[str, Form(max_length=24)] = "",
) -> Response:
    """Signs in. Every attempt counts against its address; wrong passwords from addresses that
    never signed in as the name count against the name, and past that limit such an address
    must bring a proof of work (app/web/http/signin_guard.py). A known address is never held up by
    others' guesses, and a right password is never refused for attempts it did not make."""
    guard, address = signin_guard(request), client_address(request)
    key = name_key(name.strip())
    try:
        limits = limits_of(request)
        limits.hit_address(request, limits.signin)
        known = guard.is_known(key, address)
        if not known and guard.under_attack(key):
            if not challenge and not proof:
                raise guard.proof_required(key)
            guard.check(key, challenge, proof)  # once: a used proof is spent, right or wrong
        try:
            player = players.sign_in(name.strip(), password)
        except BadCredentials:
            if not known:
                guard.failed(key)
            raise
    except ServiceError as exc:
        # The account page again, its sign-in form included, with the reason: a typo is easy
        # to correct there.
        message = i18n.say("Not signed in: %(reason)s", reason=service_message(exc))
        again: dict[str, object] | None = None
        if isinstance(exc, ProofRequired):
            again = {"name": name.strip(), "challenge": guard.challenge(key)}
        response = _account_page(request, viewer, players, None, message, exc.status, again)
        response.headers.update(getattr(exc, "headers", {}))  # Retry-After when rate-limited
        return response
    guard.remember(key, address)
    sign_session_in(request, player.id, player.session_version)
    response = _back_to_account(request, i18n.say("Signed in as %(name)s.", name=player.name))
    if player.prefs is not None:  # the account's preferences come to this device
        set_prefs_cookie(request, response, player.prefs)
        chosen = i18n.pref_lang(player.prefs)
        if chosen is not None:  # and so does its language
            set_lang_cookie(request, response, chosen)
    return response


@router.post("/signout")
def sign_out(request: Request, viewer: ViewerDep, players: PlayersDep) -> Response:
    """Signs this player out everywhere: every copy of every session cookie stops working."""
    if viewer is not None:
        players.revoke_sessions(viewer)
    request.session.clear()
    return RedirectResponse("/", status_code=303)
