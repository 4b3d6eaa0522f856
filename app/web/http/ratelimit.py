"""Rate limits on abuse, with the ``limits`` library: per player and per address.

Counts live in memory (one count per process) unless ``REDIS_URL`` is set: then every process
and every app instance shares them through Redis, under the key prefix ``RATE_LIMIT_PREFIX``.
A request over a limit gets ``429`` with ``Retry-After`` (seconds until the window frees up).

Routes on the event loop (the moves) count with :meth:`RateLimits.hit_all_async`: with Redis,
each process decides from its own hits and the shared counts of its last exchange with Redis,
and exchanges them every ``RATE_LIMIT_SHARE_MS`` (app/web/http/shared_counts.py: the same keys
and windows as ``limits``' storage, so the synchronous routes and the event loop count
together); elsewhere as :meth:`RateLimits.hit` (memory: no I/O to wait for).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

import redis.asyncio
from fastapi import Request
from limits import RateLimitItem, parse_many
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage, Storage
from limits.strategies import FixedWindowRateLimiter
from limits.util import WindowStats
from starlette.requests import HTTPConnection

from app.config import Settings
from app.services.errors import N_, ServiceError
from app.web.http.shared_counts import SharedCounts

log = logging.getLogger(__name__)


class RateLimited(ServiceError):
    status, code = 429, "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        # ``reason``: a message of the catalogs itself (app/web/words.py says it too).
        super().__init__(
            N_("%(reason)s (try again in %(retry)s s)"), reason=message, retry=retry_after
        )
        self.retry_after = retry_after
        self.headers = {"Retry-After": str(retry_after)}


@dataclass(frozen=True)
class Rule:
    name: str
    items: tuple[RateLimitItem, ...]
    message: str


class SweepingMemoryStorage(MemoryStorage):
    """limits' MemoryStorage, without its timer thread.

    The library starts a ``threading.Timer`` after every increment whose previous timer has
    finished (10 ms), to drop expired keys: under load that is a new thread a hundred times a
    second per process, fighting the request threads for the GIL. Fixed windows expire their
    counters lazily on read anyway; the keys nobody reads again are swept here, in the
    request's thread, once a minute. (Overrides the private ``__schedule_expiry`` of
    limits 5.8, which is pinned; tests/web/test_security.py checks no thread is started.)
    """

    SWEEP_SECONDS = 60.0

    def __init__(self) -> None:
        super().__init__()
        self._next_sweep = time.monotonic() + self.SWEEP_SECONDS

    def _MemoryStorage__schedule_expiry(self) -> None:
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + self.SWEEP_SECONDS
            self._MemoryStorage__expire_events()  # type: ignore[attr-defined]


def _rule(name: str, text: str, message: str) -> Rule:
    return Rule(name, tuple(parse_many(text)), message)


class RateLimits:
    """The app's limits; ``hit(rule, key)`` counts one action or raises :class:`RateLimited`."""

    def __init__(self, settings: Settings) -> None:
        self.enabled = settings.rate_limits_enabled
        self.storage: Storage
        self.redis_url = settings.redis_url
        self.key_prefix = f"{settings.rate_limit_prefix}:limits"
        if settings.redis_url:
            self.storage = RedisStorage(
                settings.redis_url,
                key_prefix=self.key_prefix,
                wrap_exceptions=True,
                socket_connect_timeout=0.5,
                socket_timeout=0.5,
            )
        else:
            self.storage = SweepingMemoryStorage()
        self.limiter = FixedWindowRateLimiter(self.storage)
        self.share_every = settings.rate_limit_share_ms / 1000
        # Redis on the event loop of the app's lifespan (start/stop): its connections belong
        # to that loop.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool: redis.asyncio.ConnectionPool | None = None
        self.shared: SharedCounts | None = None
        self.signin = _rule(
            "signin", settings.rate_limit_signin, "Too many sign-in attempts; wait and try again."
        )
        self.new_players = _rule(
            "players",
            settings.rate_limit_new_players,
            "Too many new players from this address; wait and try again.",
        )
        self.new_players_proved = _rule(
            "players-proved",
            settings.rate_limit_new_players_proved,
            "Too many new players from this address; wait and try again.",
        )
        self.new_games = _rule(
            "games", settings.rate_limit_new_games, "Too many new games; wait and try again."
        )
        self.moves = _rule(
            "moves", settings.rate_limit_moves, "Too many moves at once; wait a moment."
        )
        self.room_joins = _rule(
            "room-joins",
            settings.rate_limit_room_joins,
            "Too many rooms joined or left; wait and try again.",
        )
        self.hints = _rule("hints", settings.rate_limit_hints, "Too many hints; wait a moment.")
        self.analyses = _rule(
            "analyses", settings.rate_limit_analyses, "Too many analyses; wait a moment."
        )
        self.costly_address = _rule(
            "costly",
            settings.rate_limit_costly_address,
            "Too many hints, analyses and room changes from this address; wait a moment.",
        )
        self.address = _rule(
            "address", settings.rate_limit_address, "Too many requests from this address."
        )

    def hit(self, rule: Rule, key: str) -> None:
        if not self.enabled:
            return
        for item in rule.items:
            try:
                allowed = self.limiter.hit(item, rule.name, key)
                stats = None if allowed else self.limiter.get_window_stats(item, rule.name, key)
            except StorageError as exc:
                _unavailable(exc)
                return
            _refuse_when_over(rule, stats)

    def start(self) -> None:
        """Count on Redis from the running loop without blocking it (the app's lifespan)."""
        if not self.redis_url:
            return
        self._pool = redis.asyncio.ConnectionPool.from_url(
            self.redis_url, socket_connect_timeout=0.5, socket_timeout=0.5
        )
        self.shared = SharedCounts(self._pool, self.share_every)
        self._loop = asyncio.get_running_loop()

    async def stop(self) -> None:
        pool, shared = self._pool, self.shared
        self._pool, self.shared, self._loop = None, None, None
        if shared is not None:
            await shared.stop()
        if pool is not None:
            await pool.disconnect()

    async def hit_all_async(self, hits: Sequence[tuple[Rule, str]]) -> None:
        """:meth:`hit` of each ``(rule, key)`` in turn, for a route on the event loop: with
        Redis, decided in this process without waiting for Redis (:class:`SharedCounts`)."""
        shared = self.shared
        if shared is None or self._loop is not asyncio.get_running_loop():
            for rule, key in hits:  # in memory (or a loop without a pool of its own: tests)
                self.hit(rule, key)
            return
        if not self.enabled:
            return
        windows = [(rule, item, key) for rule, key in hits for item in rule.items]
        prefix = self.key_prefix
        refused = shared.hit(
            [
                (
                    f"{prefix}:{item.key_for(rule.name, _spaceless(key))}",
                    item.get_expiry(),
                    item.amount,
                )
                for rule, item, key in windows
            ]
        )
        if refused is not None:
            _refuse(windows[refused.index][0], refused.seconds_left)

    def hit_address(self, request: Request, rule: Rule | None = None) -> None:
        """Counts against the address's overall limit, and against ``rule`` for it."""
        address = client_address(request)
        if rule is not None:
            self.hit(rule, address)
        self.hit(self.address, address)

    def clear(self) -> None:
        self.storage.reset()


def client_address(request: HTTPConnection) -> str:
    # uvicorn's --proxy-headers puts the client's address here from the trusted proxies'
    # X-Forwarded-For (FORWARDED_ALLOW_IPS); a direct client's own address otherwise.
    return request.client.host if request.client else "unknown"


def limits_of(request: HTTPConnection) -> RateLimits:
    limits: RateLimits = request.app.state.limits
    return limits


def limit_costly(request: HTTPConnection, what: str, player: str | None) -> None:
    """The per-player limit of a costly action (``room-joins``, ``hints`` or ``analyses``; a
    viewer without a player counts by address alone), then the address's limit of all of them
    together and its overall limit."""
    limits = limits_of(request)
    rule = {"room-joins": limits.room_joins, "hints": limits.hints, "analyses": limits.analyses}[
        what
    ]
    address = client_address(request)
    limits.hit(rule, player if player is not None else f"address:{address}")
    limits.hit(limits.costly_address, address)
    limits.hit(limits.address, address)


def limit_player(request: Request, what: str, player: str) -> None:
    """The per-player limit of ``what`` (``games``, or ``moves`` for every board action) and
    the address's overall limit."""
    limits = limits_of(request)
    limits.hit(limits.new_games if what == "games" else limits.moves, player)
    limits.hit_address(request)


async def limit_player_async(request: Request, what: str, player: str) -> None:
    """:func:`limit_player` for a route on the event loop."""
    limits = limits_of(request)
    rule = limits.new_games if what == "games" else limits.moves
    await limits.hit_all_async(((rule, player), (limits.address, client_address(request))))


def _spaceless(key: str) -> str:
    # The exchange with Redis sends its windows as lines of words (shared_counts.py).
    return key if key.isprintable() and " " not in key else quote(key, safe="")


def _unavailable(exc: Exception) -> None:
    # Redis unreachable: the limits fail open (players keep playing) and say so.
    log.warning("rate limits unavailable, not counting: %s", exc)


def _refuse_when_over(rule: Rule, stats: WindowStats | None) -> None:
    """A 429 with the seconds until the rule's window resets, when the hit was refused."""
    if stats is not None:
        _refuse(rule, math.ceil(stats.reset_time - time.time()))


def _refuse(rule: Rule, seconds_left: int) -> None:
    raise RateLimited(rule.message, max(1, seconds_left))
