"""Pages: home, shared deal links, the board, rules, and the player's account."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from markdown_it import MarkdownIt
from markupsafe import Markup

from app.config import PROJECT_DIR
from app.engine import GAMES, MAX_DEAL, Move
from app.services import daily
from app.services.errors import BadCredentials, InvalidRequest, NotFound, ServiceError
from app.services.game_views import GameView
from app.services.history import MyGames
from app.services.players import check_name, name_key
from app.services.statuses import ArenaStatus
from app.web import i18n
from app.web.deps import (
    SESSION_VERSION,
    ArenasDep,
    BrowserPlayer,
    DealsDep,
    GamesDep,
    HistoryDep,
    PlayersDep,
    RoomsDep,
    SettingsDep,
    SolverDep,
    ViewerDep,
    new_browser_player,
    sign_session_in,
)
from app.web.http.ratelimit import client_address, limits_of
from app.web.http.signin_guard import ProofRequired, SignInGuard, signin_guard_of
from app.web.i18n import N_
from app.web.pages.board import (
    CLOCK_FORMATS,
    GameHeader,
    clock_text,
    duration_words,
    pile_choices,
    pile_views,
    status_context,
)
from app.web.pages.charts import moves_histogram
from app.web.pages.htmx import is_htmx, vary_on_htmx
from app.web.pages.play import BOARD_FLASH
from app.web.pages.rooms import race_panel
from app.web.pages.templating import (
    PREF_FLAGS,
    PREFS_COOKIE,
    PREFS_MAX_AGE,
    Prefs,
    prefs_of,
    render,
)
from app.web.pages.wins import win_comparison
from app.web.state import settings_of
from app.web.words import code_label, service_message

router = APIRouter()
SAFE_BACK = re.compile(r"/(?![/\\])[A-Za-z0-9/_.~%?=&-]*")


@router.get("/")
def home(
    request: Request,
    viewer: ViewerDep,
    settings: SettingsDep,
    solver: SolverDep,
    rooms: RoomsDep,
    history: HistoryDep,
    arenas: ArenasDep,
) -> Response:
    return render(
        request,
        "pages/home.html",
        {
            "in_progress": history.in_progress(viewer, 5) if viewer else [],
            "max_deal": MAX_DEAL,
            "daily": daily.daily_deals(daily.today(), settings.deal_key_bytes),
            "live": rooms.live(10),
            "playing_now": rooms.playing_now(),
            "certified": solver.certified_games(),
            "events": [e for e in arenas.listed() if e.status != ArenaStatus.FINISHED],
        },
    )


@router.get("/my-games")
def my_games(request: Request, viewer: ViewerDep, history: HistoryDep) -> Response:
    mine = history.of(viewer) if viewer else MyGames([], [])
    return render(
        request,
        "pages/my_games.html",
        {"mine": mine, "clock": clock_text},
    )


@router.get("/deal/{game}/{number}")
def deal_page(
    request: Request,
    game: str,
    number: str,
    deals: DealsDep,
    viewer: ViewerDep,
    settings: SettingsDep,
) -> Response:
    summary = deals.summary(game, number, viewer)
    cap = duration_words(int(settings.idle_cap_seconds))
    # The finished games' moves, drawn only from the list the page may show this viewer.
    shown = summary.finished if summary.replays_open else []
    wins = [g.moves for g in shown if g.status == "won"]
    chart = moves_histogram("deal-moves", wins, N_("Moves per win on this deal")) if wins else None
    return render(
        request,
        "pages/deal.html",
        {"deal": summary, "rules": summary.rules, "idle_cap": cap, "chart": chart},
    )


@router.get("/games/{game_id}")
def board(request: Request, game_id: str, viewer: ViewerDep, games: GamesDep) -> Response:
    view = games.get(game_id, viewer)
    flash = request.session.pop(BOARD_FLASH, None)
    said = flash if isinstance(flash, dict) and flash.get("game") == game_id else {}
    owner = viewer is not None and view.record.player_id == viewer
    mine = owner and not view.finished
    status = status_context(view, owner, win_comparison(request, view, viewer), watching=not owner)
    # A race's game shows its owner the race beside the board, live (app/web/pages/rooms.py).
    race = (race_panel(request, view, viewer) if viewer is not None else None) or {}
    response = render(
        request,
        "pages/game.html",
        {
            **race,
            "race_panel": bool(race),
            "game": GameHeader.of(view),
            "rules": view.rules,
            "piles": pile_views(view),
            "status": status,
            "mine": mine,
            "announce": {"text": said.get("text", ""), "error": bool(said.get("error"))},
            "choices": pile_choices(view.rules),
            "clock_formats": " ".join(CLOCK_FORMATS),  # the running clock's face, as the server's
            "note": view.rules.table_note,
            "runs": view.rules.runs_move,
            "has_stock": "stock" in view.rules.layout.index,
            # Without JavaScript the legal moves are offered as buttons (they reveal nothing).
            "nojs_moves": _moves_in_words(view, status["legal_moves"]),
        },
    )
    # Back (or a restored tab) must show the board as it is now, not as it was first loaded.
    response.headers["Cache-Control"] = "no-store"
    return response


def _moves_in_words(view: GameView, legal: list[str]) -> list[tuple[str, str]]:
    piles = view.piles()
    out = []
    for notation in legal:
        move = Move.parse(notation)
        if move.source == "stock":
            words = i18n.gettext("Deal from the stock")
        elif move.target == "stock":
            words = i18n.gettext("Turn the waste over (redeal)")
        else:
            cards = piles[move.source].get("cards") or []
            first = cards[-move.count] if len(cards) >= move.count else None
            what = code_label(first) if first else "?"
            if move.count > 1:
                what = i18n.say_n(
                    "%(card)s and %(n)s more", "%(card)s and %(n)s more", move.count - 1, card=what
                )
            words = f"{what}: {move.source} → {move.target}"
        out.append((notation, words))
    return out


@router.post("/prefs")
def save_prefs(
    request: Request,
    viewer: ViewerDep,
    players: PlayersDep,
    auto: Annotated[str, Form(max_length=8)] = "",
    four: Annotated[str, Form(max_length=8)] = "",
    large: Annotated[str, Form(max_length=8)] = "",
    sound: Annotated[str, Form(max_length=8)] = "",
    theme: Annotated[str, Form(max_length=16)] = "",
    cardback: Annotated[str, Form(max_length=16)] = "",
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    """The preferences form: on the account (when this browser has a player: they follow it to
    every device) and in the cookie. Guides already read stay read. An unknown theme or card
    back is the default one."""
    chosen = {
        name
        for name, value in (("auto", auto), ("four", four), ("large", large), ("sound", sound))
        if value
    }
    if theme == "dark":
        chosen.add("dark")
    if f"back-{cardback}" in PREF_FLAGS:
        chosen.add(f"back-{cardback}")
    kept = {f for f in prefs_of(request).flags if f.startswith(("guide-", i18n.LANG_PREF))}
    return _store_prefs(request, viewer, players, Prefs(frozenset(chosen | kept)), back)


@router.post("/lang")
def choose_language(
    request: Request,
    viewer: ViewerDep,
    players: PlayersDep,
    lang: Annotated[str, Form(max_length=8)],
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    """The language picker of every page's header: on the account (when this browser has a
    player: it follows the player to every device) and in the ``lang`` cookie."""
    if lang not in i18n.LANGS:
        raise InvalidRequest(i18n.say("There is no such language: choose en, de, fr or es."))
    flags = {f for f in prefs_of(request).flags if not f.startswith(i18n.LANG_PREF)}
    prefs = Prefs(frozenset(flags | {i18n.LANG_PREF + lang}))
    if viewer is not None:
        players.save_prefs(viewer, prefs.cookie())
    target = back if SAFE_BACK.fullmatch(back) else "/"
    response = RedirectResponse(target, status_code=303)
    set_lang_cookie(request, response, lang)
    set_prefs_cookie(request, response, prefs.cookie())
    return response


def set_lang_cookie(request: Request, response: Response, lang: str) -> None:
    response.set_cookie(
        i18n.LANG_COOKIE,
        lang,
        max_age=PREFS_MAX_AGE,
        samesite="lax",
        httponly=False,
        secure=settings_of(request).secure_cookies,
    )


@router.post("/prefs/guide")
def guide_read(
    request: Request,
    viewer: ViewerDep,
    players: PlayersDep,
    game: Annotated[str, Form(max_length=64)],
    back: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    """A game's first-visit guide, dismissed: it is not shown again (remembered as the other
    preferences are)."""
    if game not in GAMES:
        raise InvalidRequest(N_("There is no such game."))
    prefs = prefs_of(request)
    return _store_prefs(request, viewer, players, Prefs(prefs.flags | {f"guide-{game}"}), back)


def _store_prefs(
    request: Request, viewer: str | None, players: PlayersDep, prefs: Prefs, back: str
) -> Response:
    if viewer is not None:
        players.save_prefs(viewer, prefs.cookie())
    if is_htmx(request):
        # The page puts on the classes the server paints with (the cookie is set below).
        response: Response = Response(status_code=204)
        response.headers["HX-Trigger"] = json.dumps({"prefs-saved": {"classes": prefs.classes}})
    else:
        # Only a path on this site: never an open redirect.
        target = back if SAFE_BACK.fullmatch(back) else "/"
        response = RedirectResponse(target, status_code=303)
    set_prefs_cookie(request, response, prefs.cookie())
    return vary_on_htmx(response)


def set_prefs_cookie(request: Request, response: Response, value: str) -> None:
    response.set_cookie(
        PREFS_COOKIE,
        value,
        max_age=PREFS_MAX_AGE,
        samesite="lax",
        httponly=False,
        secure=settings_of(request).secure_cookies,
    )


def rules_file(slug: str, lang: str) -> Path:
    """A rule page in ``lang`` (docs/rules/{slug}.{lang}.md), or the English one."""
    folder = PROJECT_DIR / "docs" / "rules"
    translated = folder / f"{slug}.{lang}.md"
    return translated if lang != i18n.DEFAULT and translated.is_file() else folder / f"{slug}.md"


def _rules_html(slug: str) -> Markup:
    return _rules_html_in(slug, i18n.current_lang())


@lru_cache(maxsize=32)
def _rules_html_in(slug: str, lang: str) -> Markup:
    text = rules_file(slug, lang).read_text(encoding="utf-8")
    # The rule pages are our own files; html=False still keeps any raw HTML out.
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    # Links between the rule files point at the pages that show them on the site.
    return Markup(_RULE_LINK.sub(_site_link, html))


_RULE_LINK = re.compile(r'href="([A-Za-z-]+)\.md(#[a-z0-9-]*)?"')


def _site_link(found: re.Match[str]) -> str:
    name, anchor = found[1], found[2] or ""
    return f'href="/rules{"" if name == "README" else "/" + name}{anchor}"'


@router.get("/rules")
def rules_index(request: Request) -> Response:
    """The conventions the five games share (card codes, pile ids, wrap-around)."""
    return render(request, "pages/rules.html", {"rules": None, "body": _rules_html("README")})


@router.get("/rules/{game}")
def rules_page(request: Request, game: str) -> Response:
    rules = GAMES.get(game)
    if rules is None:
        raise NotFound(N_("There is no such game."))
    return render(request, "pages/rules.html", {"rules": rules, "body": _rules_html(game)})


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
