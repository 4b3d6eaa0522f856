"""The moves' windows counted in the process and shared through Redis in batches
(app/web/http/shared_counts.py), against the machine's Redis. (Through the app's rate limits,
with limits' own storage on the same keys: tests/web/http/test_ratelimit.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import redis
import redis.asyncio

from app.web.http import shared_counts
from app.web.http.shared_counts import Refusal, SharedCounts
from tests.aio import run
from tests.local_redis import REDIS_URL, needs_redis
from tests.waiting import wait_until_async

pytestmark = needs_redis


@contextlib.asynccontextmanager
async def counting(every: float = 0.05) -> AsyncIterator[SharedCounts]:
    pool = redis.asyncio.ConnectionPool.from_url(
        REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5
    )
    shared = SharedCounts(pool, every)
    try:
        yield shared
    finally:
        await shared.stop()
        await pool.disconnect()


def _key() -> str:
    return f"ph-test-{uuid.uuid4().hex[:12]}:window"


def _redis() -> redis.Redis:
    return redis.Redis.from_url(REDIS_URL)


def test_hits_are_decided_at_once_and_sent_in_one_exchange() -> None:
    key = _key()

    async def go() -> None:
        async with counting() as shared:
            assert [shared.hit([(key, 60, 3)]) for _ in range(3)] == [None, None, None]
            refused = shared.hit([(key, 60, 3)])
            assert refused is not None and refused.index == 0
            assert 1 <= refused.seconds_left <= 60
            assert shared.exchanges == 0  # nothing waited for Redis
            await shared.flush()
            assert shared.exchanges == 1

    run(go())
    assert int(_redis().get(key) or 0) == 4  # the refused hit counts, as limits counts it
    assert 0 < _redis().pttl(key) <= 60_000


def test_the_first_window_over_its_limit_stops_the_count() -> None:
    first, second = _key(), _key()
    windows = [(first, 60, 1), (second, 60, 5)]

    async def go() -> None:
        async with counting() as shared:
            assert shared.hit(windows) is None
            refused = shared.hit(windows)
            assert refused is not None and refused.index == 0
            await shared.flush()

    run(go())
    assert int(_redis().get(first) or 0) == 2
    assert int(_redis().get(second) or 0) == 1


def test_a_window_follows_the_count_and_expiry_redis_gives_it() -> None:
    # Another process has counted 2 in a window with 20 s left.
    key = _key()
    _redis().set(key, 2, ex=20)

    async def go() -> None:
        async with counting() as shared:
            assert shared.hit([(key, 60, 4)]) is None  # knows only its own 1 of 4
            await shared.flush()  # now 3 of 4, in Redis's window
            assert shared.hit([(key, 60, 4)]) is None
            refused = shared.hit([(key, 60, 4)])
            assert refused is not None
            assert refused.seconds_left <= 20  # Redis's window, not a new minute

    run(go())


def test_an_exchange_comes_by_itself_and_sends_only_what_is_new() -> None:
    key = _key()

    async def go() -> None:
        async with counting(every=0.05) as shared:
            shared.hit([(key, 60, 100)])
            # The tick, 50 ms after the hit, sends it with no flush (a busy machine may run the
            # loop late: waited for as a condition).
            await wait_until_async(lambda: shared.exchanges > 0, "the tick's exchange", 60)
            assert shared.exchanges == 1
            await shared.flush()  # nothing new: no call
            assert shared.exchanges == 1

    run(go())
    assert int(_redis().get(key) or 0) == 1


def test_hits_made_while_an_exchange_is_under_way_go_in_the_next_one() -> None:
    key = _key()
    window = [(key, 60, 6)]

    async def go() -> None:
        async with counting() as shared:
            shared.hit(window)
            shared.hit(window)
            under_way = asyncio.create_task(shared.flush())
            while shared.exchanges == 0:  # until the exchange of two has been sent
                await asyncio.sleep(0)
            for _ in range(3):
                assert shared.hit(window) is None  # counted here meanwhile: 5 of 6
            await under_way  # it waits for the first exchange, then sends the three
            assert shared.exchanges == 2
            assert shared.hit(window) is None  # the sixth
            assert isinstance(shared.hit(window), Refusal)

    run(go())
    assert int(_redis().get(key) or 0) == 7


def test_a_burst_goes_to_redis_at_once_not_at_the_next_tick() -> None:
    # A tick every 5 s: only a burst (a quarter of a window's limit since the last exchange)
    # can send an exchange within this test.
    key = _key()

    async def go() -> None:
        async with counting(every=5.0) as shared:
            for _ in range(4):
                shared.hit([(key, 1, 20)])
            for _ in range(10):
                await asyncio.sleep(0)
            assert shared.exchanges == 0  # 4 of 20: waits for the tick
            shared.hit([(key, 1, 20)])  # the fifth: a quarter of the limit
            for _ in range(10):
                if shared.exchanges:
                    break
                await asyncio.sleep(0)
            assert shared.exchanges == 1

    run(go())


def test_stopping_sends_what_is_pending() -> None:
    key = _key()

    async def go() -> None:
        async with counting(every=5.0) as shared:
            shared.hit([(key, 60, 100)])

    run(go())
    assert int(_redis().get(key) or 0) == 1


def test_windows_long_over_are_forgotten_at_an_exchange() -> None:
    old, new = _key(), _key()

    async def go() -> None:
        async with counting() as shared:
            shared.hit([(old, 1, 10)])
            await shared.flush()
            shared._windows[old].ends -= shared_counts.SWEEP_SECONDS + 1  # over long ago
            shared._next_sweep = 0.0  # a sweep is due
            shared.hit([(new, 1, 10)])
            await shared.flush()
            assert set(shared._windows) == {new}

    run(go())
