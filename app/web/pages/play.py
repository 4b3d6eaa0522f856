"""Browser play: start a game, move, undo, resign.

Every way of moving on the board (click, drag, double-click, keyboard, the no-JavaScript form)
posts the same move form here. With ``HX-Request`` the answer is a fragment of only the piles
that changed (out-of-band swaps) plus the status and an announcement; without it, a 303 back to
the board, so play works with JavaScript off.

Each action is one call to the game service (``Games.play``, ``undo``, ``resign``, ``finish``,
``restart``); what it did is put in words by the engine (``Ruleset.describe``). A board is read
again only after a refusal, to show the truth.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from app.engine import InvalidMove, Move
from app.services.errors import (
    Banned,
    DealInPlay,
    NoCertifiedDeals,
    NoCertifiedDealsLeft,
    ServiceError,
)
from app.services.game_views import GameView, Played
from app.services.games import Games
from app.services.hint_views import HintView
from app.web import i18n
from app.web.deps import (
    AccountsDep,
    BrowserPlayer,
    GamesDep,
    SolverDep,
    ViewerDep,
    browser_player_id,
    viewer_id,
)
from app.web.direct import binds, media_type, text_field, urlencoded_form
from app.web.http.ratelimit import limit_costly, limit_player, limit_player_async
from app.web.i18n import gettext as _
from app.web.pages.board import GameHeader, pile_views, status_context
from app.web.pages.htmx import is_htmx, vary_on_htmx
from app.web.pages.templating import prefs_of, render
from app.web.pages.wins import win_comparison
from app.web.state import services_of
from app.web.words import (
    code_label,
    hint_message,
    pile_name,
    refusal,
    say_all,
    say_words,
    service_message,
)

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema
_DIGITS = re.compile(r"[0-9]{1,200}")  # a form field is at most 200 characters

BOARD_FLASH = "board"  # session key: what the no-JavaScript board says after a redirect
DEAL = "deal"  # the move form's "deal" button: deal from the stock, or redeal when that is due


@router.post("/games")
def start(
    request: Request,
    player: BrowserPlayer,
    games: GamesDep,
    solver: SolverDep,
    accounts: AccountsDep,
    game: Annotated[str, Form(max_length=64)],
    deal: Annotated[str, Form(max_length=200)] = "",  # longer numbers get the range message
    winnable: Annotated[str, Form(max_length=8)] = "",
) -> Response:
    """A new game: rated, of a deal number (casual), or of a deal from the certified pool of
    winnable deals (``winnable``; casual too)."""
    limit_player(request, "games", player)
    number = _whole_number(deal)
    if deal.strip() and number is None:
        return _not_started(request, _("No such deal"), _("A deal number is a whole number."), 422)
    if winnable and deal.strip():
        return _not_started(
            request,
            _("Which deal?"),
            _("Ask for a deal number or for a winnable deal, not both."),
            422,
        )
    try:
        if winnable:
            view = solver.start_winnable(player, game)
        else:
            if number is None:
                accounts.refuse_rated_if_banned(player)
            view = games.start(player, game, number)
    except Banned as exc:
        return _not_started(request, _("No rated games"), service_message(exc), exc.status)
    except NoCertifiedDeals as exc:
        return _not_started(  # (raised only for a known game)
            request,
            _("No winnable deal left")
            if isinstance(exc, NoCertifiedDealsLeft)
            else _("No winnable deal yet"),
            service_message(exc) + " " + _("Start a rated game, or play a deal by its number."),
            409,
        )
    except DealInPlay as exc:  # one unfinished game per deal: take the player back to it
        request.session[BOARD_FLASH] = {
            "game": exc.game_id,
            "text": _("You already have this deal in play: here it is."),
            "error": False,
        }
        return RedirectResponse(f"/games/{exc.game_id}", status_code=303)
    return RedirectResponse(f"/games/{view.record.id}", status_code=303)


def _not_started(request: Request, title: str, message: str, status: int) -> Response:
    return render(request, "pages/error.html", {"title": title, "message": message}, status)


def _whole_number(text: str) -> int | None:
    """A plain decimal number (ASCII digits only: ``"²".isdigit()`` is true, yet no number)."""
    text = text.strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def _answer(
    request: Request,
    game_id: str,
    player: str | None,
    games: Games,
    view: GameView | None,
    *,
    changed: tuple[str, ...] | None = None,
    text: str = "",
    error: str | None = None,
    status: int = 200,
    owner: bool = True,
) -> Response:
    """The HTMX fragment or the no-JavaScript redirect for a board action.

    ``view`` is None after a refusal: then the whole current board is sent, so that whatever
    the browser showed (another tab may have moved) is right again.
    """
    if not is_htmx(request):
        said = {"game": game_id, "text": error or text, "error": bool(error)}
        request.session[BOARD_FLASH] = said
        return vary_on_htmx(RedirectResponse(f"/games/{game_id}", status_code=303))
    if view is None:
        view = games.get(game_id, player)
        changed = None
    elif view.finished:
        changed = None  # a finished game shows every card, so the whole board is sent again
    response = render(
        request,
        "components/move_response.html",
        {
            "piles": pile_views(view, changed),
            "status": status_context(
                view,
                owner and view.record.player_id == player,
                win_comparison(request, view, player) if owner else None,
                watching=not owner,  # the board a spectator's page asked for: it asks again
            ),
            "announce": {"text": error or text, "error": bool(error)},
        },
        status,
    )
    return vary_on_htmx(response)


def _parse_move(
    move: str | None, source: str | None, target: str | None, count: str
) -> Move | None:
    """The move from a notation field (``t2-t7/3``, or ``deal``: None, the Deal button, which
    the service turns into a deal or a redeal) or from from/to/count fields."""
    if move == DEAL:
        return None
    if move:
        return Move.parse(move)
    if not source or not target:
        raise InvalidMove("Say which pile to move from and which pile to move to.")
    n = _whole_number(count)
    if n is None or not 1 <= n <= 1000:
        raise InvalidMove("The number of cards to move must be a whole number from 1.")
    return Move(source, target, n)


def _played_text(played: Played) -> str:
    """What the action did, in the engine's words; auto-moved cards say so."""
    rules = played.view.rules
    first, *auto = played.steps
    said = rules.step_words(first)
    for step in auto:
        said += rules.step_words(step, auto=True)
    return say_all(said)


# The board's move form: each text field's longest value, as the route declares it and as
# bind_move reads it (in this order), and the count when none is given.
MOVE_FIELDS = {"from": 16, "to": 16, "count": 6, "move": 24}
ONE_CARD = "1"


@router.post("/games/{game_id}/moves")
async def move(
    request: Request,
    game_id: str,
    player: BrowserPlayer,
    games: GamesDep,
    version: Annotated[int, Form(ge=0)],
    from_: Annotated[str | None, Form(alias="from", max_length=MOVE_FIELDS["from"])] = None,
    to: Annotated[str | None, Form(max_length=MOVE_FIELDS["to"])] = None,
    count: Annotated[str, Form(max_length=MOVE_FIELDS["count"])] = ONE_CARD,
    notation: Annotated[str | None, Form(alias="move", max_length=MOVE_FIELDS["move"])] = None,
) -> Response:
    """On the event loop (issue 26): the move and its auto-moves wait for the database
    without a thread (``Games.play_async``), and the fragment is rendered inline. What reads
    the database besides the move (the board after a refusal, a won game's records) goes to
    the thread pool."""
    try:
        await limit_player_async(request, "moves", player)
        chosen = _parse_move(notation, from_, to, count)
        played = await games.play_async(
            game_id, player, chosen, version, auto=prefs_of(request).auto
        )
    except InvalidMove as exc:
        return await run_in_threadpool(
            _answer, request, game_id, player, games, None, error=refusal(exc), status=422
        )
    except ServiceError as exc:
        return await run_in_threadpool(_refused, request, game_id, player, games, exc)
    view = played.view
    text = _played_text(played)
    if view.record.status == "won":
        text += " " + _("You won!")
    elif view.move_limit_reached:
        text += " " + i18n.say(
            "That was move %(n)s, the most a game may have: the game is over and counts as lost.",
            n=i18n.number(view.record.moves),
        )
    elif view.finished:
        text += " " + _("No legal move is left, and that move cannot be undone: the game is over.")
    elif not view.legal_moves:
        text += " " + _("No legal move is left: undo the last move, or end the game.")
    if view.record.status == "won":  # the summary reads the deal's records (win_comparison)
        return await run_in_threadpool(
            _answer, request, game_id, player, games, view, changed=played.changed, text=text
        )
    return _answer(request, game_id, player, games, view, changed=played.changed, text=text)


@binds(move)
async def bind_move(request: Request) -> Response | None:
    """:func:`move` for the form the board posts (app/web/direct.py); ``None``, before any
    dependency ran, for FastAPI's binding and its errors."""
    if media_type(request) != "application/x-www-form-urlencoded":
        return None
    form = await urlencoded_form(request)
    if form is None:
        return None
    given = form.get("version")
    version = _whole_number(given) if isinstance(given, str) else None  # as pydantic's int
    if version is None:
        return None
    fields = []
    for name, max_length in MOVE_FIELDS.items():
        ok, value = text_field(form, name, max_length)
        if not ok:
            return None
        fields.append(value)
    from_, to, count, notation = fields
    services = services_of(request)
    players = services.players
    player = await browser_player_id(request, await viewer_id(request, players), players)
    return await move(
        request, request.path_params["game_id"], player, services.games, version,
        from_, to, count or ONE_CARD, notation,
    )  # fmt: skip


def _refused(
    request: Request, game_id: str, player: str, games: GamesDep, exc: ServiceError
) -> Response:
    """A refused board action: the reason and the current board. Not-yours and no-such-game
    are pages of their own, not board fragments."""
    if exc.status in (403, 404, 503):
        raise exc
    response = _answer(
        request, game_id, player, games, None, error=service_message(exc), status=exc.status
    )
    response.headers.update(getattr(exc, "headers", {}))  # Retry-After of a rate limit
    return response


OptionalVersion = Annotated[str, Form(max_length=12)]


def _version(text: str) -> int | None:
    """The board's version sent with undo and resign (empty: the form did not say)."""
    if not text.strip():
        return None
    number = _whole_number(text)
    if number is None:
        raise InvalidMove("The version is a whole number.")
    return number


@router.post("/games/{game_id}/undo")
async def undo(
    request: Request,
    game_id: str,
    player: BrowserPlayer,
    games: GamesDep,
    version: OptionalVersion = "",
) -> Response:
    try:
        await limit_player_async(request, "moves", player)
        view = (await games.undo_async(game_id, player, _version(version))).view
    except InvalidMove as exc:
        return await run_in_threadpool(
            _answer, request, game_id, player, games, None, error=refusal(exc), status=422
        )
    except ServiceError as exc:
        return await run_in_threadpool(_refused, request, game_id, player, games, exc)
    step = view.step
    changed = step.changed if step else ()
    text = say_words(view.rules.undo_words(step)) if step else _("Took back a move.")
    return _answer(request, game_id, player, games, view, changed=changed, text=text)


@router.post("/games/{game_id}/resign")
async def resign(
    request: Request,
    game_id: str,
    player: BrowserPlayer,
    games: GamesDep,
    version: OptionalVersion = "",
) -> Response:
    try:
        await limit_player_async(request, "moves", player)
        view = (await games.resign_async(game_id, player, _version(version))).view
    except InvalidMove as exc:
        return await run_in_threadpool(
            _answer, request, game_id, player, games, None, error=refusal(exc), status=422
        )
    except ServiceError as exc:
        return await run_in_threadpool(_refused, request, game_id, player, games, exc)
    return _answer(request, game_id, player, games, view, text=_("You resigned: the game is over."))


@router.post("/games/{game_id}/restart")
def restart(request: Request, game_id: str, player: BrowserPlayer, games: GamesDep) -> Response:
    """The same deal from the start (the game in play counts as lost)."""
    new = games.restart(game_id, player)
    return vary_on_htmx(RedirectResponse(f"/games/{new.record.id}", status_code=303))


@router.post("/games/{game_id}/finish")
def finish(request: Request, game_id: str, player: BrowserPlayer, games: GamesDep) -> Response:
    """Auto-finish: when every card left can go up without a choice, they all go up, each an
    ordinary logged move."""
    try:
        played = games.finish(game_id, player)
    except ServiceError as exc:  # nothing to finish, or another tab moved meanwhile
        return _refused(request, game_id, player, games, exc)
    view, n = played.view, len(played.steps)
    text = i18n.say_n("Finished: %(n)s card went up.", "Finished: %(n)s cards went up.", n)
    if view.record.status == "won":
        text += " " + _("You won!")
    return _answer(request, game_id, player, games, view, text=text)


@router.get("/games/{game_id}/board")
def board_now(
    request: Request,
    game_id: str,
    viewer: ViewerDep,
    games: GamesDep,
    version: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    """The whole board as it is now, for someone watching a game in play (their page asks
    every few seconds): 204 while the version they have is still the current one. Reading
    makes no player."""
    view = games.get(game_id, viewer)
    if view.record.version == version and not view.finished:
        return vary_on_htmx(Response(status_code=204))
    if not is_htmx(request):
        return vary_on_htmx(RedirectResponse(f"/games/{game_id}", status_code=303))
    return _answer(request, game_id, viewer, games, view, changed=None, text="", owner=False)


@router.post("/games/{game_id}/hint")
async def hint(
    request: Request, game_id: str, player: BrowserPlayer, games: GamesDep, solver: SolverDep
) -> Response:
    """The board's Hint button: the hint in words, in the announcement region."""
    limit_costly(request, "hints", player)
    error = False
    header = None
    try:
        answer = await solver.hint(game_id, player)
        view = await run_in_threadpool(games.get, game_id, player)
        text = hint_text(view, answer)
        header = GameHeader.of(view)  # a hint makes the game casual: the board says so at once
    except ServiceError as exc:
        if exc.status in (403, 404):
            raise
        text, error = service_message(exc), True
    if not is_htmx(request):
        request.session[BOARD_FLASH] = {"game": game_id, "text": text, "error": error}
        return vary_on_htmx(RedirectResponse(f"/games/{game_id}", status_code=303))
    response = render(
        request,
        "components/hint_response.html",
        {"announce": {"text": text, "error": error}, "game": header},
    )
    return vary_on_htmx(response)


def hint_text(view: GameView, hint: HintView) -> str:
    """A hint in a player's words; it names only a card the player can see."""
    move = hint.move
    if move is None:
        return hint_message(hint)
    rules = view.rules
    if move.source == "stock":
        what = _("deal a card from the stock")
    elif move.target == "stock":
        what = _("turn the waste over")
    else:
        cards = view.piles()[move.source].cards or ()
        count = move.count
        code = cards[-count] if len(cards) >= count else None
        card = code_label(code) if code else _("the top card")
        if count > 1:
            card = i18n.say("the run from %(card)s", card=card)
        src, dst = rules.pile_index(move.source), rules.pile_index(move.target)
        what = i18n.say(
            "move %(card)s from %(from)s to %(to)s",
            card=card,
            **{"from": pile_name(rules.pile_ref(src)), "to": pile_name(rules.pile_ref(dst))},
        )
    return i18n.say("Hint: %(what)s.", what=what) + " " + hint_message(hint)
