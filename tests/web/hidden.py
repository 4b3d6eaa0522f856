"""The hidden-card guard: run on every response the test clients receive.

For each game in play that a response shows (a JSON game state, a board page or a move
fragment), it rebuilds the exact state at the version shown from the deal and the move log and
checks that the response shows precisely the public view of that state: face-down cards as
null / card backs, the stock as a count, nothing more. It also checks that neither the deal key
nor any game's shuffle seed ever appears.

It also holds every response to the same-deal rule (contract v2): it works out who asked (the
bearer token, or the browser's session cookie) and, for every game the response shows (a JSON
game state, a board page or fragment, anything under ``/games/{id}``), checks that it is the
viewer's own game or of a deal the viewer has no unfinished game of — a player's responses never
show a card that is hidden in their own game — and that a finished game keeps its hidden cards
and its move log from anyone who has not finished its deal.

And to the seal (contract v3), with an oracle of its own rather than the app's: a rated game in
play and any game of a running race never show their deal number (not in a field, not anywhere in
the body); a finished game of a sealed deal (a rated game in play on it, a running race on it, the
deal of the day) shows no more than a game in play; a running race's game is shown to nobody but
its owner, except on the spectator's watch page, where every face shown must have been face up
at some moment in every racer's game (rebuilt from each racer's move log).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import httpx2 as httpx
from fastapi import FastAPI
from itsdangerous import BadSignature, TimestampSigner
from sqlalchemy import select

from app.db.models import CompetitionDeal, Game, MoveRecord, Player, Race
from app.engine import Move, Ruleset, ShownPile, State, get_ruleset
from app.engine.cards import RANKS, SUITS, parse_code
from app.engine.deals import deal_seed
from app.services.daily import daily_deal
from app.web.i18n import LANGS, gettext, speaking
from app.web.words import card_name, rank_index

PILE_RE = re.compile(
    r'<ol id="pile-(?P<id>[a-z0-9]+)" class="pile (?P<kind>\w+)(?P<fan> fanned)?"'
    r'[^>]*data-count="(?P<count>\d+)"[^>]*>(?P<body>.*?)</ol>',
    re.S,
)
STATUS_RE = re.compile(
    r'<div id="game-status" class="status (?P<status>\w+)" data-game="(?P<game>[^"]+)" '
    r'data-version="(?P<version>\d+)"'
)
# A pile holds nothing but cards, and a card is exactly one of these two shapes: a back that says
# nothing but "face-down card", or a face whose suit class, name and index all tell the same card.
ITEM_RE = re.compile(r"<li\b[^>]*>[^<]*</li>")
# The same in every language the site speaks (app/web/words.py names cards as each language does).
BACKS = set()
CARD_BY_NAME: dict[str, tuple[str, str]] = {}  # a card's spoken name → (its code, its index)
for _lang in LANGS:
    with speaking(_lang):
        BACKS.add(f'<li class="b" aria-label="{gettext("face-down card")}"></li>')
        for _code in (r + s for r in RANKS for s in SUITS):
            _face = parse_code(_code)
            CARD_BY_NAME[card_name(_face)] = (_code, rank_index(_face % 13 + 1))
FACE_RE = re.compile(
    r'<li class="(?P<suit>[cdhs])" aria-label="(?P<name>[^"<>]+)">(?P<rank>[^<]+)</li>'
)
GAME_PATH_RE = re.compile(r"^(?:/api)?/games/(?P<id>[A-Za-z0-9_-]{1,32})(?:/|$)")
WATCH_PATH_RE = re.compile(r"^/rooms/[A-Z0-9]+/watch/")
SESSION_COOKIE_RE = re.compile(r"(?:^|;\s*)ph_session=(?P<value>[^;]+)")


def public_json(view: dict[str, ShownPile]) -> dict[str, Any]:
    """The engine's public view in the JSON shape contract.md gives a game in play, written
    out here rather than taken from the web layer so that the check does not grade itself: the
    stock a count only, every other pile its cards (face-down ones null)."""
    return {
        pid: {"count": pile.count} if pid == "stock" else {"cards": list(pile.cards or ())}
        for pid, pile in view.items()
    }


def pile_items(pid: str, body: str) -> list[str | None]:
    """The cards a pile's markup shows, bottom to top: a code per face, None per back."""
    items = ITEM_RE.findall(body)
    assert "".join(items) == body.strip(), f"{pid} holds something other than cards"
    out: list[str | None] = []
    for item in items:
        if item in BACKS:
            out.append(None)
            continue
        face = FACE_RE.fullmatch(item)
        assert face is not None, f"{pid} shows a card in an unknown shape: {item}"
        known = CARD_BY_NAME.get(face["name"])
        assert known is not None, f"{pid} names no card: {face['name']}"
        code, rank = known
        assert face["suit"] == code[1].lower() and face["rank"] == rank, f"{pid}: {item}"
        out.append(code)
    return out


@dataclass
class HiddenCardGuard:
    app: FastAPI
    checked_games: int = 0
    same_deal_checks: int = 0
    _seeds: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    _viewer: str | None = None
    _watching: bool = False  # the response is a spectator's watch page or its board
    number_checks: int = 0
    sealed_checks: int = 0
    spectator_checks: int = 0
    # The owner of each bearer token seen (by its digest): a token never changes hands.
    _owners: dict[str, str] = field(default_factory=dict)
    # The one session all of a response's reads share (a session per read was half the
    # guard's time, and the guard was a third of a web test's), one per thread: the
    # concurrency tests check responses in several threads at once.
    _local: threading.local = field(default_factory=threading.local)

    @property
    def _open(self) -> Any:
        return getattr(self._local, "db", None)

    def check(self, response: httpx.Response) -> None:
        with self.app.state.services.sessions() as db:
            self._local.db = db
            try:
                self._check(response)
            finally:
                self._local.db = None

    def _check(self, response: httpx.Response) -> None:
        response.read()
        body = response.text
        key = self.app.state.settings.deal_key
        assert key not in body, "the deal key reached a client"
        if response.status_code == 503:
            return  # the database is away: nothing was shown, and nobody can be looked up
        try:
            request: httpx.Request | None = response.request
        except RuntimeError:  # a response made up by a test of the guard itself
            request = None
        if request is not None and request.url.path == "/openapi.json":
            return  # the schema describes game states (GameState) but shows none
        self._viewer = None if request is None else self.viewer_of(request)
        self._watching = request is not None and bool(WATCH_PATH_RE.match(request.url.path))
        kind = response.headers.get("content-type", "")
        if "json" in kind and body:
            self._walk(response.json(), body)
        elif "html" in kind:
            self._check_html(body)
        path = None if request is None else GAME_PATH_RE.match(request.url.path)
        if path is not None and response.status_code == 200:
            self._may_see(path["id"])

    # -- who asked, and the same-deal rule ---------------------------------------------------

    def viewer_of(self, request: httpx.Request) -> str | None:
        """The player a request acts as: its bearer token under /api, else its session."""
        if request.url.path.startswith("/api/"):
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                return None
            digest = hashlib.sha256(token.strip().encode()).hexdigest()
            known = self._owners.get(digest)
            if known is not None:
                return known
            with self._session() as db:
                owner: str | None = db.scalar(select(Player.id).where(Player.token_hash == digest))
            if owner is not None:
                self._owners[digest] = owner
            return owner
        cookie = SESSION_COOKIE_RE.search(request.headers.get("cookie", ""))
        if cookie is None:
            return None
        signer = TimestampSigner(str(self.app.state.settings.session_secret))
        try:
            data = json.loads(base64.b64decode(signer.unsign(cookie["value"])))
        except (BadSignature, ValueError):
            return None
        pid = data.get("pid") if isinstance(data, dict) else None
        return pid if isinstance(pid, str) else None

    def _sees_everything(self, game_id: str) -> bool:
        """Checks the same-deal rule for a game shown to the viewer; returns whether the viewer
        may see every card of it (their own, or a deal they have finished)."""
        with self._session() as db:
            record = db.get(Game, game_id)
            assert record is not None, "a response shows a game that does not exist"
            if self._viewer is None or self._viewer != record.player_id:
                assert self._watching or not self._race_on(db, record), (
                    "a running race's game was shown to someone other than its player"
                )
            if self._viewer is None or self._viewer == record.player_id:
                return self._viewer is not None
            mine = db.scalars(
                select(Game.status).where(
                    Game.player_id == self._viewer,
                    Game.game == record.game,
                    Game.deal == record.deal,
                )
            ).all()
        assert "playing" not in mine, (
            "a response showed another game of a deal the viewer has in play: it would show "
            "cards that are hidden in the viewer's own game"
        )
        self.same_deal_checks += 1
        if record.competition is not None and record.status != "playing":
            # A deal of someone's own, once its seal lifts, is open to all: no competition
            # deals it again (app/services/pool.py).
            return bool(mine) or not self._own_sealed(record)
        return bool(mine)

    def _may_see(self, game_id: str) -> None:
        self._sees_everything(game_id)

    # -- JSON --------------------------------------------------------------------------------

    def _walk(self, data: Any, body: str) -> None:
        if isinstance(data, dict):
            if {"id", "game", "deal", "status", "piles", "version"} <= data.keys():
                self._check_json_game(data, body)
            for value in data.values():
                self._walk(value, body)
        elif isinstance(data, list):
            for value in data:
                self._walk(value, body)

    def _check_json_game(self, data: dict[str, Any], body: str) -> None:
        record = self._record(data["id"])
        self._check_seed(record.game, record.deal, body)
        hidden = self._check_number(record, body)
        assert data["deal"] == (None if hidden else record.deal), "the deal number, sealed or not"
        whole = self._sees_everything(data["id"])
        if data["status"] != "playing" and whole and not self._sealed(record):
            return
        rules, state = self._state_at(data["id"], data["version"])
        if "stock" in data["piles"]:
            assert set(data["piles"]["stock"]) == {"count"}, "stock cards shown in play"
        assert data["piles"] == public_json(rules.public_view(state)), (
            "JSON shows more than the public view"
        )
        assert "log" not in data, "the move log of a game in play was shown"
        self.checked_games += 1

    # -- HTML --------------------------------------------------------------------------------

    def _check_html(self, body: str) -> None:
        status = STATUS_RE.search(body)
        if status is None:
            return
        record = self._record(status["game"])
        self._check_seed(record.game, record.deal, body)
        self._check_number(record, body)
        whole = self._sees_everything(status["game"])
        if status["status"] != "playing" and whole and not self._sealed(record):
            return
        rules, state = self._state_at(status["game"], int(status["version"]))
        public = rules.public_view(state)
        shared = self._shared_faces(record) if self._watching and self._race_on_id(record) else None
        seen = 0
        for m in PILE_RE.finditer(body):
            seen += 1
            pid = m["id"]
            items = pile_items(pid, m["body"])
            if pid == "stock":
                assert not any(items), "a stock card reached the page"
                assert len(items) <= 1, "the stock shows more than one back"
                assert int(m["count"]) == public["stock"].count
                continue
            cards = public[pid].cards
            assert cards is not None
            assert int(m["count"]) == len(cards)
            expected = list(cards if m["fan"] else cards[-1:])
            if shared is None:
                assert items == expected, f"{pid} shows wrong cards or backs"
            else:  # the spectator view: fewer faces, never a face some racer has not seen
                assert len(items) == len(expected), f"{pid} shows wrong cards or backs"
                for item, card in zip(items, expected, strict=True):
                    assert item is None or item == card, f"{pid} shows wrong cards"
                    assert item is None or item in shared, f"{pid}: a spectator saw {item}"
                self.spectator_checks += 1
        assert seen, "a board without piles"
        self.checked_games += 1

    # -- the seal (contract v3), by an oracle of the guard's own -------------------------------

    def _record(self, game_id: str) -> Game:
        with self._session() as db:
            record: Game | None = db.get(Game, game_id)
            assert record is not None, "a response shows a game that does not exist"
            return record

    @staticmethod
    def _race_on(db: Any, record: Game) -> bool:
        if record.race_id is None:
            return False
        return bool(db.scalar(select(Race.status).where(Race.id == record.race_id)) == "running")

    def _race_on_id(self, record: Game) -> bool:
        with self._session() as db:
            return self._race_on(db, record)

    def _check_number(self, record: Game, body: str) -> bool:
        """A rated game in play or a game of a running race: its number is nowhere in the body
        (a casual game's number is the one its player chose). Returns whether hidden."""
        hidden = (record.rated and record.status == "playing") or self._race_on_id(record)
        if record.competition is not None:  # a deal of one's own: hidden while sealed
            hidden = hidden or record.status == "playing" or self._own_sealed(record)
        # A certified pool's deal numbers are small (1, 2, 3, …): "9" is in any body, so the
        # JSON's deal field (checked by the caller) says it for those.
        if hidden and record.deal >= 100_000:
            assert str(record.deal) not in body, "a sealed deal number reached a client"
            self.number_checks += 1
        return hidden

    def _own_sealed(self, record: Game) -> bool:
        """A deal of someone's own (a challenge's, an event's) whose claim still holds."""
        with self._session() as db:
            until = db.scalar(
                select(CompetitionDeal.sealed_until).where(
                    CompetitionDeal.game == record.game, CompetitionDeal.deal == record.deal
                )
            )
        return until is not None and until > self.app.state.services.sealer.clock()

    def _sealed(self, record: Game) -> bool:
        sealed = bool(self._seals(record))
        self.sealed_checks += sealed
        return sealed

    def _seals(self, record: Game) -> set[str]:
        """What holds the record's deal sealed: a running race on it, another rated game of
        it in play, it is today's deal of the day (UTC)."""
        settings = self.app.state.settings
        with self._session() as db:
            racing = db.scalar(
                select(Race.id).where(
                    Race.game == record.game, Race.deal == record.deal, Race.status == "running"
                )
            )
            rated = db.scalar(
                select(Game.id).where(
                    Game.game == record.game,
                    Game.deal == record.deal,
                    Game.rated.is_(True),
                    Game.status == "playing",
                    Game.id != record.id,
                )
            )
        day = self.app.state.services.sealer.today()
        daily = daily_deal(record.game, day, settings.deal_key_bytes) == record.deal
        kinds = {"race"} if racing is not None else set()
        kinds |= {"rated"} if rated is not None else set()
        kinds |= {"own"} if self._own_sealed(record) else set()
        return kinds | ({"daily"} if daily else set())

    def _shared_faces(self, record: Game) -> set[str]:
        """The faces that have been face up at some moment in every game of the record's
        race, each racer's game replayed from its move log."""
        with self._session() as db:
            racers = db.scalars(select(Game.id).where(Game.race_id == record.race_id)).all()
        shared: set[str] | None = None
        for game_id in racers:
            faces: set[str] = set()
            for state in self._states(game_id):
                rules = get_ruleset(state.game)
                for pile in rules.public_view(state).values():
                    faces.update(c for c in pile.cards or () if c is not None)
            shared = faces if shared is None else shared & faces
        return shared or set()

    def _states(self, game_id: str) -> list[State]:
        """Every state the game has been in, in order (undone ones included)."""
        record = self._record(game_id)
        with self._session() as db:
            rows = db.scalars(
                select(MoveRecord).where(MoveRecord.game_id == game_id).order_by(MoveRecord.seq)
            ).all()
        rules = get_ruleset(record.game)
        stack = [rules.deal(record.deal, self.app.state.settings.deal_key_bytes)]
        seen = list(stack)
        for row in rows:
            if row.action == "move":
                stack.append(rules.apply(stack[-1], Move.parse(row.notation or "")))
                seen.append(stack[-1])
            elif row.action == "undo":
                stack.pop()
                seen.append(stack[-1])
        return seen

    # -- helpers -----------------------------------------------------------------------------

    def _session(self) -> Any:
        """The session of the response being checked (``check`` opens one per response)."""
        assert self._open is not None, "the guard reads the database only inside check()"
        return nullcontext(self._open)

    def _state_at(self, game_id: str, version: int) -> tuple[Ruleset, State]:
        """The game's state right after action number ``version``, rebuilt from the log."""
        with self._session() as db:
            record = db.get(Game, game_id)
            assert record is not None, "a response shows a game that does not exist"
            rows = db.scalars(
                select(MoveRecord)
                .where(MoveRecord.game_id == game_id, MoveRecord.seq <= version)
                .order_by(MoveRecord.seq)
            ).all()
        rules = get_ruleset(record.game)
        key = self.app.state.settings.deal_key_bytes
        states = [rules.deal(record.deal, key)]
        for row in rows:
            if row.action == "move":
                states.append(rules.apply(states[-1], Move.parse(row.notation or "")))
            elif row.action == "undo":
                states.pop()
        return rules, states[-1]

    def _check_seed(self, game: str, deal: int, body: str) -> None:
        forms = self._seeds.get((game, deal))
        if forms is None:
            seed = deal_seed(self.app.state.settings.deal_key_bytes, game, deal)
            forms = [
                seed.hex(),
                base64.b64encode(seed).decode().rstrip("="),
                base64.urlsafe_b64encode(seed).decode().rstrip("="),
            ]
            self._seeds[(game, deal)] = forms
        for form in forms:
            assert form not in body, "a deal seed reached a client"


# -- events (rooms and races) ------------------------------------------------------------------

CARD_CODE_RE = re.compile(r"[A23456789TJQK][CDHS]")
PROGRESS_KEYS = {"player", "game", "moves", "foundation_cards", "status"}
EVENT_KINDS = {"room", "race", "progress", "standings"}  # standings: an event's (arena)
CARD_KEYS = {"piles", "cards", "state", "log", "stock", "waste", "legal_moves"}


def check_event(kind: str, data: Any) -> None:
    """No event carries a card: a progress event is counts only, and nothing anywhere in an
    event is a card code or a field that holds cards."""
    assert kind in EVENT_KINDS, kind
    if kind == "progress":
        assert set(data) == PROGRESS_KEYS, data
        assert isinstance(data["moves"], int) and isinstance(data["foundation_cards"], int)

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            assert not CARD_KEYS & value.keys(), f"an event holds cards: {value}"
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            assert not CARD_CODE_RE.fullmatch(value), f"an event names a card: {value}"

    walk(data)
