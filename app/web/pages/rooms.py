"""Rooms in the browser: the room page (members, start, countdown, the racers' progress bars
and the finish table, kept live by the htmx SSE extension), joining by link or code, and
spectating a racer's board (public view only; the same-deal rule keeps racers out).

The room page listens to ``/rooms/{code}/events?view=html``: the same events as the JSON
stream, each rendered as out-of-band fragments for this viewer, so the browser swaps only what
changed: a progress event replaces one racer's row; a room or race event re-renders the live
part of the room (members, buttons, race, standings) from the database.

An event costs one room read and one render per *variant* in a process, not one per stream
(:class:`LiveFragments`): what differs between viewers is a handful of flags (member or not,
their own race game, may they watch, may they join or start), which key the rendered fragment,
and their session's CSRF token, put into the shared fragment in place of a marker. The
fragment is kept as the Server-Sent Event's bytes, encoded once too (:func:`sse_event`).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from cachetools import LRUCache
from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup
from sse_starlette import ServerSentEvent
from starlette.concurrency import run_in_threadpool

from app.engine import GAMES
from app.metrics import LIVE_RENDERS, LIVE_ROOM_READS
from app.services.errors import InvalidRequest, NotFound
from app.services.game_views import GameView
from app.services.rooms.feed import EventRow
from app.services.rooms.rooms import Rooms
from app.services.rooms.views import RoomView, normalize_code
from app.services.statuses import RaceStatus, RoomStatus
from app.web import i18n
from app.web.deps import (
    SESSION_PLAYER,
    BrowserPlayer,
    GamesDep,
    LeaderboardsDep,
    RoomsDep,
    ViewerDep,
)
from app.web.http.ratelimit import limit_costly
from app.web.pages.board import GameHeader, pile_views, status_context
from app.web.pages.templating import csrf_token, render, templates
from app.web.state import services_of
from app.web.turns import Pacer

router = APIRouter(tags=["rooms"], include_in_schema=False)  # pages: left out of the API schema


def sse_event(row: EventRow, data: str) -> bytes:
    """``row`` as its stream sends it: ``id:``, ``event:`` and ``data:`` lines."""
    return ServerSentEvent(data=data, event=row.kind, id=str(row.id)).encode()


def live_context(room: RoomView, viewer: str | None) -> dict[str, Any]:
    """What the live part of a room page shows this viewer (decided here, not in templates)."""
    rules = GAMES[room.game]
    race = room.race
    member = room.is_member(viewer)
    names = {p["id"]: p["name"] for p in room.players}
    my_name = names.get(viewer or "")
    my_game = None
    if race is not None and race.status == RaceStatus.RUNNING and my_name in race.games:
        my_game = race.games[my_name]
    racing = room.racing(viewer)
    rated = race is not None and race.rated
    return {
        "room": room,
        "rules": rules,
        "race": race,
        "member": member,
        "my_game": my_game,
        # Spectators may watch racers' boards; a racer still playing may not (same-deal rule).
        "may_watch": race is not None and race.status == RaceStatus.RUNNING and not racing,
        "can_join": not member and room.status != RoomStatus.CLOSED and not rated,
        # A rated race's room holds one race: no rematch (app/services/rooms/rooms.py).
        "can_start": member and room.status == RoomStatus.OPEN and not rated,
        "finished": race is not None and race.status == RaceStatus.FINISHED,
    }


def race_panel(request: Request, view: GameView, viewer: str) -> dict[str, Any] | None:
    """The live race beside a racer's own board, or None for any other game or viewer."""
    if view.record.race_id is None or view.record.player_id != viewer:
        return None
    rooms = services_of(request).rooms
    room = rooms.room_of_race(view.record.race_id)
    context = live_context(room, viewer)
    context.update({"my_game": None, "oob": False, "last_event": rooms.last_event_id(room.code)})
    return context


def racer_row(rules_cards: int, data: dict[str, Any], may_watch: bool, code: str) -> str:
    """One racer's progress row, as an out-of-band swap (a progress event)."""
    template = templates.env.get_template("components/racer.html")
    return str(
        template.module.racer(  # type: ignore[attr-defined]
            data, rules_cards, may_watch, code, oob=True
        )
    )


# Where a viewer's CSRF token goes in a shared fragment: every text in a fragment is escaped,
# so no name or title can contain it.
CSRF_SLOT = "<csrf-token>"
_CSRF_SLOT_BYTES = CSRF_SLOT.encode()


@dataclass
class _LoopCache:
    rooms: LRUCache[tuple[str, int], asyncio.Future[RoomView]]
    contexts: LRUCache[tuple[str, int, str | None], dict[str, Any]]
    html: LRUCache[tuple[Any, ...], bytes]
    turns: Pacer


class LiveFragments:
    """The fragments of room and race events, shared by every html stream of a process.

    Each event's room is read once (the first stream to need it reads it, the others await
    that read), what it shows each viewer decided once per member and once for everyone else,
    and each fragment rendered once per variant, however many streams show it.
    Futures belong to an event loop: each loop (one per worker) has its own caches.
    """

    EVENTS = 256  # recent events kept; a stream far behind reads again (and is counted)
    # Streams that go on, once their event's room is read, in one turn of the event loop
    # (app/web/turns.py): the moves of the worker run between the slices.
    STREAMS_PER_TURN = 64

    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms
        # Rooms read, viewers' contexts made and fragments rendered (the tests count them).
        self.reads = 0
        self.contexts = 0
        self.renders = 0
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopCache] = (
            weakref.WeakKeyDictionary()
        )
        # The last loop's cache: every stream of an event asks twice, nearly always the same
        # loop (a worker has one). Weak, so that a closed loop is not kept alive by it.
        self._last: tuple[weakref.ref[asyncio.AbstractEventLoop], _LoopCache] | None = None

    def _here(self) -> _LoopCache:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        cache = self._loops.get(loop)
        if cache is None:
            cache = _LoopCache(
                LRUCache(self.EVENTS),
                LRUCache(self.EVENTS * 16),
                LRUCache(self.EVENTS * 8),
                Pacer(self.STREAMS_PER_TURN),
            )
            self._loops[loop] = cache
        self._last = (weakref.ref(loop), cache)
        return cache

    async def room_at(self, code: str, event_id: int) -> RoomView:
        """The room as read for event ``event_id`` (once for every stream of this process),
        handed to the streams waiting for it a slice a turn (app/web/turns.py)."""
        cache = self._here()
        key = (code, event_id)
        pending = cache.rooms.get(key)
        if pending is not None:
            try:
                await cache.turns.after(pending)  # never cancels the read itself
                return pending.result()
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this stream was cancelled, not the read
            except Exception:
                pass
            return await self._read(cache, key)
        return await self._read(cache, key)

    def room_read(self, code: str, event_id: int) -> RoomView | None:
        """The room as read for event ``event_id``, if that read is done; None otherwise."""
        pending = self._here().rooms.get((code, event_id))
        if pending is None or not pending.done() or pending.cancelled():
            return None
        return None if pending.exception() is not None else pending.result()

    async def prepare(self, row: EventRow) -> None:
        """Reads the room for a room or race event, before the broker offers it to streams
        (:meth:`room_read` then has it); a progress event needs no read."""
        if row.kind != "progress":
            await self.room_at(row.room, row.id)

    async def _read(self, cache: _LoopCache, key: tuple[str, int]) -> RoomView:
        future: asyncio.Future[RoomView] = asyncio.get_running_loop().create_future()
        cache.rooms[key] = future
        self.reads += 1
        LIVE_ROOM_READS.inc()
        try:
            room = await run_in_threadpool(self.rooms.get, key[0])
        except BaseException as exc:
            cache.rooms.pop(key, None)  # the next stream reads again
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: no "never retrieved" warning without waiters
            raise
        future.set_result(room)
        return room

    def context(
        self, code: str, event_id: int, room: RoomView, viewer: str | None
    ) -> dict[str, Any]:
        """:func:`live_context` of ``room`` (as read for event ``event_id``) for ``viewer``:
        made once for each member and once for everyone else, to whom a room shows the same
        (no membership, no race game, not racing). Shared: read it, do not change it."""
        cache = self._here()
        who = viewer if room.is_member(viewer) else None
        key = (code, event_id, who)
        context = cache.contexts.get(key)
        if context is None:
            self.contexts += 1
            context = live_context(room, who)
            cache.contexts[key] = context
        return context

    def fragment(self, key: tuple[Any, ...], lang: str, make: Callable[[], bytes]) -> bytes:
        """The fragment ``key`` in ``lang``, made once (in that language, whichever stream's
        task comes to it first) for every stream of the process that shows it."""
        cache = self._here()
        key = (lang, *key)
        html = cache.html.get(key)
        if html is None:
            self.renders += 1
            LIVE_RENDERS.inc()
            with i18n.speaking(lang):
                html = make()
            cache.html[key] = html
        return html


class RowRenderer:
    """An event as one stream sends it: :meth:`__call__` awaits what it needs (the room read
    for the event); :meth:`ready` renders without waiting, or answers None when that read is
    not in yet (the broker's delivery pushes with it, app/web/pages/live.py)."""

    async def __call__(self, row: EventRow) -> bytes:
        return sse_event(row, row.data)

    def ready(self, row: EventRow) -> bytes | None:
        return sse_event(row, row.data)

    # Makes what ready() needs for an event, awaited once for every stream that shares it.
    prepare: Callable[[EventRow], Awaitable[None]] | None = None


class HtmlRows(RowRenderer):
    """Each event of the room rendered for the viewer of one stream (their session); with
    ``on_board``, for the race panel beside a racer's board. The room read and the rendering
    are shared with the other streams of the process (:class:`LiveFragments`)."""

    def __init__(
        self, request: Request, rooms: Rooms, room: RoomView, on_board: bool = False
    ) -> None:
        viewer = request.session.get(SESSION_PLAYER)
        self.viewer = viewer if isinstance(viewer, str) else None
        self.lang = i18n.lang_of_scope(request.scope)  # the stream's, fixed at its opening
        self.may_watch = live_context(room, self.viewer)["may_watch"]
        self.cards = GAMES[room.game].cards
        self.live = templates.env.get_template("components/room_live.html")
        self.fragments: LiveFragments = request.app.state.live_fragments
        # Made now, while the session can still be saved; escaped once, as the fragments hold it.
        self.csrf = str(Markup.escape(csrf_token(request))).encode()
        self.code = room.code
        self.on_board = on_board
        # Equal for every stream of the process: the broker awaits it once per event.
        self.prepare = self.fragments.prepare

    async def __call__(self, row: EventRow) -> bytes:
        if row.kind == "progress":
            return self._progress(row)
        return self._live(row, await self.fragments.room_at(self.code, row.id))

    def ready(self, row: EventRow) -> bytes | None:
        if row.kind == "progress":
            return self._progress(row)
        now = self.fragments.room_read(self.code, row.id)
        return None if now is None else self._live(row, now)

    def _progress(self, row: EventRow) -> bytes:
        may_watch, code = self.may_watch, self.code
        return self.fragments.fragment(
            (code, row.id, "progress", may_watch),
            self.lang,
            lambda: sse_event(row, racer_row(self.cards, json.loads(row.data), may_watch, code)),
        )

    def _live(self, row: EventRow, now: RoomView) -> bytes:
        context = self.fragments.context(self.code, row.id, now, self.viewer)
        self.may_watch = context["may_watch"]
        if self.on_board:  # beside the racer's own board: no link to it
            context = {**context, "my_game": None}
        variant = (
            self.code,
            row.id,
            "live",
            context["member"],
            context["my_game"],
            context["may_watch"],
            context["can_join"],
            context["can_start"],
        )
        shared = self.fragments.fragment(
            variant,
            self.lang,
            lambda: sse_event(
                row, self.live.render({**context, "oob": True, "csrf": Markup(CSRF_SLOT)})
            ),
        )
        return shared.replace(_CSRF_SLOT_BYTES, self.csrf)


def html_events(request: Request, rooms: Rooms, room: RoomView, on_board: bool = False) -> HtmlRows:
    """The room's events as html fragments for this stream's viewer (:class:`HtmlRows`)."""
    return HtmlRows(request, rooms, room, on_board)


@router.get("/rooms")
def rooms_home() -> Response:
    """Rooms are made and found by their code on the games' page: a typed or bookmarked
    ``/rooms`` goes there (not to a "Method Not Allowed")."""
    return RedirectResponse("/#live-now", status_code=303)


@router.post("/rooms")
def create_room(
    game: Annotated[str, Form(max_length=64)], player: BrowserPlayer, rooms: RoomsDep
) -> Response:
    room = rooms.create(player, game)
    return RedirectResponse(room.url, status_code=303)


@router.post("/rooms/find")
def find_room(code: Annotated[str, Form(max_length=32)], rooms: RoomsDep) -> Response:
    """Joining by a typed code starts at the room's page."""
    canonical = normalize_code(code)
    if canonical is None:
        raise InvalidRequest("A room code has 6 letters and digits, e.g. K7RMQD.")
    return RedirectResponse(rooms.get(canonical).url, status_code=303)


@router.get("/rooms/{code}")
def room_page(
    request: Request, code: str, viewer: ViewerDep, rooms: RoomsDep, boards: LeaderboardsDep
) -> Response:
    """A room as its visitor sees it; reading it makes no player (joining does)."""
    room = rooms.get(code)
    if room.code != code:  # typed in lower case: the canonical address
        return RedirectResponse(room.url, status_code=303)
    context = live_context(room, viewer)
    context.update({"last_event": rooms.last_event_id(room.code), "oob": False, "share": room.url})
    rated = room.race is not None and room.race.rated
    ratings = boards.race_ratings([p["id"] for p in room.players], room.game) if rated else {}
    context.update({"rated": rated, "ratings": ratings})
    return render(request, "pages/room.html", context)


@router.post("/rooms/{code}/join")
def join_room(request: Request, code: str, player: BrowserPlayer, rooms: RoomsDep) -> Response:
    limit_costly(request, "room-joins", player)
    return RedirectResponse(rooms.join(code, player).url, status_code=303)


@router.post("/rooms/{code}/leave")
def leave_room(request: Request, code: str, player: BrowserPlayer, rooms: RoomsDep) -> Response:
    limit_costly(request, "room-joins", player)
    rooms.leave(code, player)
    return RedirectResponse("/", status_code=303)


@router.post("/rooms/{code}/start")
def start_race(code: str, player: BrowserPlayer, rooms: RoomsDep) -> Response:
    room = rooms.start(code, player)
    assert room.race is not None
    return RedirectResponse(room.url, status_code=303)


def _watched(rooms: Rooms, code: str, game_id: str, view: GameView | None = None) -> RoomView:
    """The room, if the game is a race game of it: of its current race, or (for a page still
    open after a rematch or after the room closed) of an earlier race of the room."""
    room = rooms.get(code)
    race = room.race
    if race is not None and game_id in race.games.values():
        return room
    race_id = view.record.race_id if view is not None else None
    if race_id is None or rooms.room_of_race(race_id).code != room.code:
        raise NotFound("That game is not in this room's race.")
    return room


@router.get("/rooms/{code}/watch/{game_id}")
def watch_page(
    request: Request,
    code: str,
    game_id: str,
    viewer: ViewerDep,
    rooms: RoomsDep,
    games: GamesDep,
) -> Response:
    """A spectator's view of one racer's board, live: only the cards every racer has seen are
    face up (contract v3); a racer still playing gets 403. Watching makes no player."""
    view = games.spectate(game_id, viewer)
    room = _watched(rooms, code, game_id, view)
    return render(
        request,
        "pages/watch.html",
        {
            "room": room,
            "game": GameHeader.of(view),
            "rules": view.rules,
            "piles": pile_views(view),
            "status": status_context(view, view.record.player_id == viewer),
            "last_event": rooms.last_event_id(room.code),
        },
    )


@router.get("/rooms/{code}/watch/{game_id}/board")
def watch_board(
    request: Request,
    code: str,
    game_id: str,
    viewer: ViewerDep,
    rooms: RoomsDep,
    games: GamesDep,
) -> Response:
    """The watched board's piles and status, for the spectator page to swap in."""
    view = games.spectate(game_id, viewer)
    _watched(rooms, code, game_id, view)
    return render(
        request,
        "components/watched_board.html",
        {
            "rules": view.rules,
            "piles": pile_views(view),
            "status": status_context(view, view.record.player_id == viewer),
        },
    )
