"""Players: anonymous browser players, chosen names, passwords and API tokens."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from anyio import to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerifyMismatchError
from cachetools import LRUCache
from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import Player
from app.db.move_store import MoveStore
from app.services.errors import N_, BadCredentials, InvalidRequest, NameTaken, NotFound

# Matched whole with fullmatch: "$" would also accept a name ending in a newline.
NAME_RULE = re.compile(r"[A-Za-z0-9_-]{3,24}")
NAME_HELP = N_("A name has 3 to 24 characters: letters, digits, _ and -.")
# What a browser's session check reads (built once: it runs on most board actions).
_SESSION_VERSION = select(Player.session_version, Player.prefs).where(
    Player.id == bindparam("player_id")
)
# Whose API token this is (by the token's digest): read on every API call the cache misses.
_TOKEN_OWNER = select(Player.id).where(Player.token_hash == bindparam("digest"))
_TAKEN = N_("The name %(name)s is taken; please choose another.")
MAX_NAME = 24
MIN_PASSWORD = 8
# Deleted accounts keep their games under a ghost name with this prefix: nobody may choose one.
GHOST_PREFIX = "deleted-"

_hasher = PasswordHasher()
# Verified when a name has no password (or no player), so that a refused sign-in takes as long
# whether or not the name exists and has a password.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))
_ADJECTIVES = (
    "Amber", "Bold", "Brisk", "Calm", "Clever", "Crimson", "Deft", "Eager", "Gentle", "Golden",
    "Jolly", "Keen", "Lucky", "Merry", "Nimble", "Patient", "Quiet", "Royal", "Steady", "Swift",
)  # fmt: skip
_NOUNS = (
    "Ace", "Badger", "Crane", "Deuce", "Falcon", "Fox", "Heron", "Jack", "King", "Knave",
    "Lark", "Otter", "Owl", "Queen", "Raven", "Robin", "Stag", "Trump", "Wren", "Lynx",
)  # fmt: skip


def now() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    """An opaque id with 128 random bits."""
    return secrets.token_urlsafe(16)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normal_name(name: str) -> str:
    """The name as it is kept: NFKC-normalised (a full-width "Ａ" is an "A")."""
    return unicodedata.normalize("NFKC", name)


def name_key(name: str) -> str:
    """What makes two names the same: NFKC, then case-folded."""
    return normal_name(name).casefold()


def check_name(name: str) -> str:
    """The normalised name, or InvalidRequest when it breaks the name rules."""
    if not isinstance(name, str):
        raise InvalidRequest(NAME_HELP)
    name = normal_name(name)
    if not NAME_RULE.fullmatch(name):
        raise InvalidRequest(NAME_HELP)
    if name.casefold().startswith(GHOST_PREFIX):
        raise InvalidRequest(
            "Names starting with %(prefix)s are kept for deleted accounts.",
            prefix=repr(GHOST_PREFIX),
        )
    return name


def _random_name(attempt: int = 0) -> str:
    """An adjective, a noun and digits; every third failed attempt adds a digit, so that names
    never run out however full the space of shorter ones gets (up to 24 characters)."""
    stem = f"{secrets.choice(_ADJECTIVES)}{secrets.choice(_NOUNS)}"
    digits = min(4 + attempt // 3, MAX_NAME - len(stem))
    return f"{stem}{secrets.randbelow(10**digits):0{digits}d}"


def create_player(
    db: Session, name: str | None = None, *, with_token: bool = False
) -> tuple[Player, str | None]:
    """A new player, anonymous (random name) unless ``name`` is given; with an API token if asked.

    Returns the player and the token in clear (only ever shown in this answer)."""
    token = secrets.token_urlsafe(32) if with_token else None
    if name is not None:
        name = check_name(name)
        if _find_by_name(db, name) is not None:
            raise NameTaken(_TAKEN, name=repr(name))
    for attempt in range(40):
        chosen = name or _random_name(attempt)
        player = Player(
            id=new_id(),
            name=chosen,
            name_key=name_key(chosen),
            session_version=0,
            token_hash=hash_token(token) if token else None,
            created_at=now(),
        )
        try:
            with db.begin_nested():
                db.add(player)
        except IntegrityError:
            if name is not None:
                raise NameTaken(
                    "The name %(name)s is taken; please choose another.", name=repr(name)
                ) from None
            continue
        return player, token
    raise RuntimeError("could not find a free random name")  # pragma: no cover


def _find_by_name(db: Session, name: str) -> Player | None:
    return db.scalar(select(Player).where(Player.name_key == name_key(name)))


def find_by_name(db: Session, name: str) -> Player | None:
    return _find_by_name(db, name) if NAME_RULE.fullmatch(normal_name(name)) else None


def rename(db: Session, player: Player, name: str) -> Player:
    name = check_name(name)
    other = _find_by_name(db, name)
    if other is not None and other.id != player.id:
        raise NameTaken(_TAKEN, name=repr(name))
    player.name, player.name_key = name, name_key(name)
    try:
        db.flush()
    except IntegrityError:  # a concurrent rename took it first
        raise NameTaken(
            "The name %(name)s is taken; please choose another.", name=repr(name)
        ) from None
    return player


def set_password(player: Player, password: str) -> None:
    """Sets the password and revokes every browser session signed in before."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD or len(password) > 256:
        raise InvalidRequest("A password needs %(min)s to 256 characters.", min=MIN_PASSWORD)
    player.password_hash = _hasher.hash(password)
    player.session_version += 1


def sign_in(db: Session, name: str, password: str) -> Player:
    """The player, or BadCredentials. Takes as long whether the name is unknown, has no
    password or has another one: a dummy hash is verified in the first two cases."""
    player = find_by_name(db, name) if isinstance(name, str) else None
    stored = player.password_hash if player is not None else None
    try:
        _hasher.verify(stored or _DUMMY_HASH, password)
        if stored is None:
            raise VerifyMismatchError
    except (VerifyMismatchError, InvalidHashError):
        raise BadCredentials("That name and password do not match.") from None
    assert player is not None and player.password_hash is not None
    if _hasher.check_needs_rehash(player.password_hash):
        player.password_hash = _hasher.hash(password)
    return player


class TokenOwners(LRUCache[str, tuple[str, float]]):
    """Token digest -> (owner, when read), with the digests of each owner at hand: every
    process forgets a player on each change it hears of, which a search of up to
    ``maxsize`` entries would make slow."""

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        self.of: dict[str, set[str]] = {}

    def __setitem__(self, digest: str, value: tuple[str, float]) -> None:
        super().__setitem__(digest, value)
        self.of.setdefault(value[0], set()).add(digest)

    def __delitem__(self, digest: str) -> None:
        owner = self[digest][0]
        super().__delitem__(digest)
        digests = self.of.get(owner)
        if digests is not None:
            digests.discard(digest)
            if not digests:
                del self.of[owner]

    def clear(self) -> None:
        super().clear()
        self.of.clear()

    def forget_owner(self, owner: str) -> None:
        for digest in list(self.of.get(owner, ())):
            del self[digest]


class Players:
    """The player use cases, each in its own transaction."""

    # Player rows are never deleted (a deleted account keeps its row under a ghost name), so
    # a player found once stays known; remembering it saves a database round trip on every API
    # call and every page. A token's owner and a session version (with the preferences read
    # with it) are remembered too: this process's own changes update them at once. Another
    # process's changes (a sign-out on another worker, ``python -m app.cli player revoke``)
    # reach this one as they commit, through the database's notifications (app/db/broker.py,
    # migration 0015), while the broker listens: then what was read is kept FED_SECONDS, so
    # that a board move at a human pace needs no session read (issue 26). Whenever nothing
    # tells this process of such changes (SQLite, or the LISTEN connection down), it keeps a
    # session version SESSION_CACHE_SECONDS and a token's owner TOKEN_CACHE_SECONDS, as
    # before, and it forgets everything when the notifications stop and when they start.
    CACHE_LIMIT = 100_000
    SESSION_CACHE_SECONDS = 2.0
    TOKEN_CACHE_SECONDS = 30.0
    FED_SECONDS = 600.0

    def __init__(
        self,
        sessions: sessionmaker[Session],
        clock: Callable[[], float] = time.monotonic,
        store: MoveStore | None = None,
    ) -> None:
        self.sessions = sessions
        self.store = store  # its connections of the event loop, for session_version_async
        self.clock = clock
        # Request threads share these: cachetools' caches are not thread-safe on their own.
        self._lock = threading.Lock()
        # digest -> (owner, when read); player -> (session version, when read)
        self._token_owner = TokenOwners(self.CACHE_LIMIT)
        self._known: LRUCache[str, bool] = LRUCache(self.CACHE_LIMIT)
        self._session_versions: LRUCache[str, tuple[int, float]] = LRUCache(self.CACHE_LIMIT)
        self._prefs: LRUCache[str, str | None] = LRUCache(self.CACHE_LIMIT)
        self._fed = False  # every other process's change is heard (the broker listens)
        # Bumped by every forgetting: a read that began before one is not remembered, as it
        # may hold what was just forgotten.
        self._epoch = 0

    # -- what other processes changed (app/db/broker.py, PostgresBroker) --------------------

    def changed(self, player_ids: list[str]) -> None:
        """Another process (or this one) changed these players' sessions, token or
        preferences: read them again."""
        for player_id in player_ids:
            self.forget(player_id)

    def feed(self, live: bool) -> None:
        """Whether every change is heard from now on. Either way what was read before is
        forgotten: changes made while nobody listened were not heard."""
        with self._lock:
            self._fed = live
            self._epoch += 1
            self._token_owner.clear()
            self._session_versions.clear()
            self._prefs.clear()

    def _fresh(self, read_at: float, short: float) -> bool:
        return self.clock() - read_at < (self.FED_SECONDS if self._fed else short)

    def create_anonymous(self) -> Player:
        with self.sessions.begin() as db:
            return create_player(db)[0]

    def create_api_player(self, name: str | None) -> tuple[Player, str]:
        with self.sessions.begin() as db:
            player, token = create_player(db, name, with_token=True)
            assert token is not None
            return player, token

    def cached_session_version(self, player_id: str) -> int | None:
        """The session version as remembered (see the class's comment), if it still is."""
        with self._lock:
            found = self._session_versions.get(player_id)
            if found is None or not self._fresh(found[1], self.SESSION_CACHE_SECONDS):
                return None
            return found[0]

    def session_version(self, player_id: str) -> int | None:
        """The player's current session version; None when there is no such player. The
        player's preferences are read in the same query (``cached_prefs``)."""
        epoch = self._epoch
        with self.sessions() as db:
            row = db.execute(_SESSION_VERSION, {"player_id": player_id}).first()
        return self._session_row(player_id, row, epoch)

    async def session_version_async(self, player_id: str) -> int | None:
        """:meth:`session_version`, awaited on the event loop: on the loop's connections of
        the move store where it has them (PostgreSQL; every board action checks the browser's
        session), else in the thread pool."""
        inline = None if self.store is None else self.store.inline_here()
        if inline is None:
            return await to_thread.run_sync(self.session_version, player_id)
        epoch = self._epoch
        row = await inline.read(_SESSION_VERSION, {"player_id": player_id})
        return self._session_row(player_id, row, epoch)

    def _session_row(self, player_id: str, row: Any, epoch: int) -> int | None:
        if row is None:
            return None
        version = int(row.session_version)
        with self._lock:
            if self._epoch == epoch:  # nothing was forgotten while it was read
                self._prefs[player_id] = row.prefs
                self._session_versions[player_id] = (version, self.clock())
        return version

    def _remember_version(self, player_id: str, version: int) -> None:
        """This process's own change, committed: remembered as it is now."""
        with self._lock:
            self._session_versions[player_id] = (version, self.clock())

    def cached_prefs(self, player_id: str) -> str | None:
        """The preferences stored on the account as last read with its session version (None:
        none saved, or not read yet)."""
        with self._lock:
            return self._prefs.get(player_id)

    def save_prefs(self, player_id: str, prefs: str) -> None:
        """Stores the preferences on the account (they follow it to every device)."""
        with self.sessions.begin() as db:
            db.execute(update(Player).where(Player.id == player_id).values(prefs=prefs[:200]))
        with self._lock:
            self._prefs[player_id] = prefs[:200]

    def revoke_sessions(self, player_id: str) -> int:
        """Bumps the session version: every browser session of the player stops working."""
        with self.sessions.begin() as db:
            player = _must(db, player_id)
            player.session_version += 1
            version = player.session_version
        self._remember_version(player_id, version)
        return version

    def cached_token_owner(self, token: str) -> str | None:
        with self._lock:
            found = self._token_owner.get(hash_token(token))
            if found is None or not self._fresh(found[1], self.TOKEN_CACHE_SECONDS):
                return None
            return found[0]

    def forget(self, player_id: str) -> None:
        """Drops what this process remembers of the player's token, sessions and preferences
        (other processes hear of the change from the database: see the class's comment)."""
        with self._lock:
            self._epoch += 1
            self._token_owner.forget_owner(player_id)
            self._session_versions.pop(player_id, None)
            self._prefs.pop(player_id, None)

    def exists(self, player_id: str) -> bool:
        with self._lock:
            if player_id in self._known:
                return True
        with self.sessions() as db:
            found = db.scalar(select(Player.id).where(Player.id == player_id)) is not None
        if found:
            with self._lock:
                self._known[player_id] = True
        return found

    def get(self, player_id: str) -> Player | None:
        with self.sessions() as db:
            return db.get(Player, player_id)

    def id_for_token(self, token: str) -> str | None:
        digest = hash_token(token)
        owner = self.cached_token_owner(token)
        if owner is not None:
            return owner
        epoch = self._epoch
        with self.sessions() as db:
            owner = db.scalar(_TOKEN_OWNER, {"digest": digest})
        return self._remember_owner(digest, owner, epoch)

    async def id_for_token_async(self, token: str) -> str | None:
        """:meth:`id_for_token`, awaited on the event loop: on the loop's connections of the
        move store where it has them (PostgreSQL), else in the thread pool. Each API player's
        owner is read again every TOKEN_CACHE_SECONDS, so about one move in ten of a player
        who moves every few seconds needs it: in a thread, those moves waited for the pool's
        few threads behind slower requests (an event's ``next``), the moves' long tail in
        bench/compete.py (bench/RESULTS.md, Events)."""
        inline = None if self.store is None else self.store.inline_here()
        if inline is None:
            return await to_thread.run_sync(self.id_for_token, token)
        owner = self.cached_token_owner(token)
        if owner is not None:
            return owner
        digest = hash_token(token)
        epoch = self._epoch
        row = await inline.read(_TOKEN_OWNER, {"digest": digest})
        return self._remember_owner(digest, None if row is None else row[0], epoch)

    def _remember_owner(self, digest: str, owner: str | None, epoch: int) -> str | None:
        if owner is not None:
            with self._lock:
                if self._epoch == epoch:  # nothing was forgotten while it was read
                    self._token_owner[digest] = (owner, self.clock())
        return owner

    def rename(self, player_id: str, name: str) -> Player:
        with self.sessions.begin() as db:
            return rename(db, _must(db, player_id), name)

    def set_password(self, player_id: str, password: str) -> Player:
        with self.sessions.begin() as db:
            player = _must(db, player_id)
            set_password(player, password)
        self._remember_version(player_id, player.session_version)
        return player

    def sign_in(self, name: str, password: str) -> Player:
        with self.sessions.begin() as db:
            return sign_in(db, name, password)


def _must(db: Session, player_id: str) -> Player:
    player = db.get(Player, player_id)
    if player is None:
        raise NotFound("No such player.")
    return player
