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
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx2 as httpx
from fastapi import FastAPI
from itsdangerous import BadSignature, TimestampSigner
from sqlalchemy import select

from app.db.models import Game, MoveRecord, Player
from app.engine import Move, Ruleset, State, get_ruleset
from app.engine.cards import RANK_LABELS, RANKS, SUITS, name_of, parse_code
from app.engine.deals import deal_seed

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
BACK = '<li class="b" aria-label="face-down card"></li>'
FACE_RE = re.compile(
    r'<li class="(?P<suit>[cdhs])" aria-label="(?P<name>[^"<>]+)">(?P<rank>[^<]+)</li>'
)
CARD_BY_NAME = {name_of(parse_code(r + s)): r + s for r in RANKS for s in SUITS}
GAME_PATH_RE = re.compile(r"^(?:/api)?/games/(?P<id>[A-Za-z0-9_-]{1,32})(?:/|$)")
SESSION_COOKIE_RE = re.compile(r"(?:^|;\s*)ph_session=(?P<value>[^;]+)")


def pile_items(pid: str, body: str) -> list[str | None]:
    """The cards a pile's markup shows, bottom to top: a code per face, None per back."""
    items = ITEM_RE.findall(body)
    assert "".join(items) == body.strip(), f"{pid} holds something other than cards"
    out: list[str | None] = []
    for item in items:
        if item == BACK:
            out.append(None)
            continue
        face = FACE_RE.fullmatch(item)
        assert face is not None, f"{pid} shows a card in an unknown shape: {item}"
        code = CARD_BY_NAME.get(face["name"])
        assert code is not None, f"{pid} names no card: {face['name']}"
        rank = RANK_LABELS[RANKS.index(code[0])]
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

    def check(self, response: httpx.Response) -> None:
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
            with self._session() as db:
                owner: str | None = db.scalar(select(Player.id).where(Player.token_hash == digest))
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
        self._check_seed(data["game"], data["deal"], body)
        whole = self._sees_everything(data["id"])
        if data["status"] != "playing" and whole:
            return
        rules, state = self._state_at(data["id"], data["version"])
        if "stock" in data["piles"]:
            assert set(data["piles"]["stock"]) == {"count"}, "stock cards shown in play"
        assert data["piles"] == rules.public_view(state), "JSON shows more than the public view"
        assert "log" not in data, "the move log of a game in play was shown"
        self.checked_games += 1

    # -- HTML --------------------------------------------------------------------------------

    def _check_html(self, body: str) -> None:
        status = STATUS_RE.search(body)
        if status is None:
            return
        whole = self._sees_everything(status["game"])
        if status["status"] != "playing" and whole:
            return
        rules, state = self._state_at(status["game"], int(status["version"]))
        with self._session() as db:
            record = db.get(Game, status["game"])
            assert record is not None
            self._check_seed(record.game, record.deal, body)
        public = rules.public_view(state)
        seen = 0
        for m in PILE_RE.finditer(body):
            seen += 1
            pid = m["id"]
            items = pile_items(pid, m["body"])
            if pid == "stock":
                assert not any(items), "a stock card reached the page"
                assert len(items) <= 1, "the stock shows more than one back"
                assert int(m["count"]) == public["stock"]["count"]
                continue
            cards = public[pid]["cards"]
            assert isinstance(cards, list)
            assert int(m["count"]) == len(cards)
            if m["fan"]:
                assert items == cards, f"{pid} shows wrong cards or backs"
            else:
                assert items == cards[-1:], f"{pid} shows more than its top card"
        assert seen, "a board without piles"
        self.checked_games += 1

    # -- helpers -----------------------------------------------------------------------------

    def _session(self) -> Any:
        return self.app.state.sessions()

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
EVENT_KINDS = {"room", "race", "progress"}
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
