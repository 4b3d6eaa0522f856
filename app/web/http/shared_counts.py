"""The moves' rate-limit windows, decided in this process and shared through Redis in batches.

A move used to wait for one Redis round trip to be counted (issue 26: about a sixth of the
box's work per move). Here each process decides at once, from its own hits plus every process's
count as Redis gave it at this process's last exchange, and sends its hits in one script call
every ``every`` seconds while there are any. The counts are the same Redis keys, in the same
fixed windows, as ``limits``' storage of the other routes, so both count together.

What it gives up, written in docs/security.md: the others' hits reach a process's decisions
at most one exchange late, so a client spreading a burst over N processes can be let through
up to what each process admits between two exchanges beyond the limit. A window that takes a
quarter of its limit between two exchanges is sent at once, not at the next tick. One process
alone counts exactly. While Redis cannot be reached each process goes on counting on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import redis.asyncio
from redis.commands.core import AsyncScript

log = logging.getLogger("app.web.http.ratelimit")

# For each window (a line "key expiry hits"): add this process's hits since the last exchange,
# start the window's expiry when this made the key (as limits' incr_expire.lua does), and answer
# its count and the milliseconds it has left, a line each. One string each way: with a few
# hundred windows an exchange, redis-py's packing and parsing of separate arguments cost more
# than the script does. (The keys are not declared: a single Redis, as limits' storage is.)
EXCHANGE = """
local out = {}
for key, expiry, hits in string.gmatch(ARGV[1], "(%S+) (%d+) (%d+)") do
  hits = tonumber(hits)
  local current = redis.call("incrby", key, hits)
  if current == hits then
    redis.call("expire", key, expiry)
  end
  out[#out + 1] = current .. " " .. redis.call("pttl", key)
end
return table.concat(out, "\\n")
"""

# A window that takes this share of its limit (a quarter) between two exchanges is a burst: its
# hits go to Redis at once rather than at the next tick, so that a burst spread over several
# processes is seen whole sooner. Players never come near it (20 moves a second allowed).
BURST_SHARE = 4
# A window the process has not used for this long after it ended is forgotten.
SWEEP_SECONDS = 10.0
# Between two warnings that the counts cannot be shared.
WARN_SECONDS = 10.0


@dataclass(slots=True)
class Window:
    """What this process knows of one fixed window of one key."""

    expiry: int  # the window's length, seconds
    ends: float  # monotonic
    shared: int = 0  # the count of every process, as Redis last answered
    sending: int = 0  # this process's hits in the exchange under way
    pending: int = 0  # this process's hits not sent yet

    def count(self) -> int:
        return self.shared + self.sending + self.pending


@dataclass(frozen=True, slots=True)
class Refusal:
    index: int  # of the window that refused, in the order given
    seconds_left: int


class SharedCounts:
    """Fixed windows counted here and exchanged with Redis every ``every`` seconds."""

    def __init__(self, pool: redis.asyncio.ConnectionPool, every: float) -> None:
        self.every = every
        self.exchanges = 0  # script calls made (the tests count them)
        self._script: AsyncScript = redis.asyncio.Redis(connection_pool=pool).register_script(
            EXCHANGE
        )
        self._windows: dict[str, Window] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._exchange: asyncio.Task[None] | None = None
        self._next_sweep = time.monotonic() + SWEEP_SECONDS
        self._failing_since: float | None = None
        self._warned_at = -math.inf
        self._urgent = False

    def hit(self, windows: Sequence[tuple[str, int, int]]) -> Refusal | None:
        """One hit on each ``(key, expiry seconds, limit)`` in turn. As limits' limiter does,
        the first window over its limit stops the count (a refused hit is counted in it) and
        is answered with the seconds it has left."""
        now = time.monotonic()
        refusal = None
        for index, (key, expiry, limit) in enumerate(windows):
            window = self._windows.get(key)
            if window is None or now >= window.ends:
                window = self._windows[key] = Window(expiry=expiry, ends=now + expiry)
            window.pending += 1
            if window.pending * BURST_SHARE >= limit:
                self._urgent = True
            if window.count() > limit:
                refusal = Refusal(index, max(1, math.ceil(window.ends - now)))
                break
        self._soon()
        return refusal

    def _soon(self) -> None:
        if self._exchange is not None:  # its end schedules the next
            return
        if self._urgent:
            if self._timer is not None:
                self._timer.cancel()
            self._start()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.every, self._start)

    def _start(self) -> None:
        self._timer = None
        if self._exchange is not None:  # one exchange at a time: its end schedules the next
            return
        self._exchange = asyncio.get_running_loop().create_task(self._send())
        self._exchange.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._exchange = None
        if task.cancelled():
            return
        if (exc := task.exception()) is not None:
            log.error("rate limits: an exchange with Redis failed", exc_info=exc)
        if any(w.pending for w in self._windows.values()):
            self._soon()

    async def _send(self) -> None:
        self._urgent = False
        batch = [(key, w) for key, w in self._windows.items() if w.pending]
        if not batch:
            return
        lines: list[str] = []
        for key, window in batch:
            window.sending, window.pending = window.pending, 0
            lines.append(f"{key} {window.expiry} {window.sending}")
        self.exchanges += 1
        try:
            answer = (await self._script((), ("\n".join(lines),))).split()
        except (redis.RedisError, OSError) as exc:
            for _, window in batch:  # counted here alone until Redis answers again
                window.shared += window.sending
                window.sending = 0
            self._failed(exc)
            return
        self._recovered()
        now = time.monotonic()
        for (key, window), i in zip(batch, range(0, len(answer), 2), strict=True):
            window.sending = 0
            if self._windows.get(key) is not window:
                continue  # its window ended locally while the answer was on its way
            window.shared = int(answer[i])
            left_ms = int(answer[i + 1])
            if left_ms > 0:  # Redis's own window, which every process follows
                window.ends = now + left_ms / 1000
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_SECONDS
            self._windows = {
                k: w
                for k, w in self._windows.items()
                if w.ends + SWEEP_SECONDS > now or w.pending or w.sending
            }

    def _failed(self, exc: Exception) -> None:
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        if now - self._warned_at >= WARN_SECONDS:
            self._warned_at = now
            log.warning("rate limits unavailable, counting moves in this process only: %s", exc)

    def _recovered(self) -> None:
        if self._failing_since is not None:
            log.warning(
                "rate limits shared again after %.1f s", time.monotonic() - self._failing_since
            )
            self._failing_since, self._warned_at = None, -math.inf

    async def flush(self) -> None:
        """Waits for the exchange under way, then sends what is pending: on stopping, and for
        tests."""
        for _ in range(2):
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._exchange is None:
                if not any(w.pending for w in self._windows.values()):
                    return
                self._start()
            exchange = self._exchange
            assert exchange is not None
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(exchange)

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), timeout=1.0)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._exchange is not None:
            self._exchange.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._exchange
            self._exchange = None
