"""Rate limits (app/web/http/ratelimit.py) in memory: each rule counts per key, a refusal is a
429 with the seconds to wait, limits can be off, and a Redis that cannot be reached lets
players through. (Limits over HTTP and through a real Redis: tests/web/test_security.py.)"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from app.web.http.ratelimit import (
    RateLimited,
    RateLimits,
    SweepingMemoryStorage,
    client_address,
    limit_costly,
)
from app.web.http.shared_counts import SharedCounts
from tests.aio import run
from tests.local_redis import REDIS_URL, needs_redis
from tests.settings import suite_settings


def _limits(**overrides: Any) -> RateLimits:
    return RateLimits(suite_settings("sqlite://", **overrides))


def _request(limits: RateLimits, host: str | None = "198.51.100.7") -> Any:
    client = SimpleNamespace(host=host) if host else None
    return SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(limits=limits)), client=client)


def test_a_rule_counts_per_key_and_refuses_with_retry_after() -> None:
    limits = _limits(rate_limit_moves="2/minute")
    limits.hit(limits.moves, "p1")
    limits.hit(limits.moves, "p1")
    limits.hit(limits.moves, "p2")  # another key has its own count
    with pytest.raises(RateLimited) as refused:
        limits.hit(limits.moves, "p1")
    assert refused.value.status == 429 and refused.value.code == "rate_limited"
    assert 1 <= refused.value.retry_after <= 60
    assert refused.value.headers == {"Retry-After": str(refused.value.retry_after)}
    assert limits.moves.message in refused.value.message


def test_every_window_of_a_rule_counts() -> None:
    limits = _limits(rate_limit_new_games="5/minute;1/second")
    limits.hit(limits.new_games, "p")
    with pytest.raises(RateLimited):
        limits.hit(limits.new_games, "p")


def test_clear_forgets_every_count() -> None:
    limits = _limits(rate_limit_moves="1/minute")
    limits.hit(limits.moves, "p")
    with pytest.raises(RateLimited):
        limits.hit(limits.moves, "p")
    limits.clear()
    limits.hit(limits.moves, "p")  # counted from nothing again: no RateLimited


def test_nothing_is_counted_when_limits_are_off() -> None:
    on = _limits(rate_limit_moves="1/minute")
    on.hit(on.moves, "p")
    with pytest.raises(RateLimited):  # the same two hits, with limits on, are refused
        on.hit(on.moves, "p")
    off = _limits(rate_limit_moves="1/minute", rate_limits_enabled=False)
    for _ in range(3):  # none refused
        off.hit(off.moves, "p")
        run(off.hit_all_async(((off.moves, "p"),)))


def test_the_async_hit_counts_with_the_same_counts_without_redis() -> None:
    limits = _limits(rate_limit_moves="2/minute")
    run(limits.hit_all_async(((limits.moves, "p"),)))
    limits.hit(limits.moves, "p")
    with pytest.raises(RateLimited):
        run(limits.hit_all_async(((limits.moves, "p"),)))


def test_costly_actions_count_by_player_then_by_address() -> None:
    limits = _limits(
        rate_limit_hints="1/minute",
        rate_limit_analyses="1/minute",
        rate_limit_costly_address="2/minute",
    )
    request = _request(limits)
    limit_costly(request, "hints", "p1")
    with pytest.raises(RateLimited):
        limit_costly(request, "hints", "p1")  # the player's own limit (the address's not hit)
    limit_costly(request, "hints", "p2")
    with pytest.raises(RateLimited) as refused:
        limit_costly(request, "hints", "p3")  # the address's, for all of them together
    assert limits.costly_address.message in refused.value.message
    # A viewer without a player counts by address.
    other = _request(limits, "198.51.100.8")
    limit_costly(other, "analyses", None)
    with pytest.raises(RateLimited):
        limit_costly(other, "analyses", None)


def test_the_client_address_or_unknown() -> None:
    limits = _limits()
    assert client_address(_request(limits)) == "198.51.100.7"
    assert client_address(_request(limits, None)) == "unknown"


def test_an_unreachable_redis_fails_open(caplog: pytest.LogCaptureFixture) -> None:
    limits = _limits(rate_limit_moves="1/minute", redis_url="redis://127.0.0.1:1/0")
    with caplog.at_level(logging.WARNING, "app.web.http.ratelimit"):
        limits.hit(limits.moves, "p")
        limits.hit(limits.moves, "p")
    assert sum("rate limits unavailable" in r.getMessage() for r in caplog.records) == 2


def test_the_memory_storage_sweeps_in_the_callers_thread() -> None:
    storage = SweepingMemoryStorage()
    storage._next_sweep = 0.0  # due now
    storage.incr("k", expiry=60)
    assert storage._next_sweep > 0.0
    assert storage.get("k") == 1


@contextlib.asynccontextmanager
async def sharing(limits: RateLimits) -> AsyncIterator[SharedCounts]:
    """``limits`` started on the running loop, as the app's lifespan starts them (their counts
    shared through Redis), and stopped after."""
    limits.start()
    assert limits.shared is not None
    try:
        yield limits.shared
    finally:
        await limits.stop()


def _on_redis(**overrides: Any) -> RateLimits:
    prefix = f"ph-test-{uuid.uuid4().hex[:12]}"
    return _limits(redis_url=REDIS_URL, rate_limit_prefix=prefix, **overrides)


@needs_redis
def test_moves_are_decided_here_and_reach_redis_in_one_exchange_on_the_same_keys() -> None:
    limits = _on_redis(rate_limit_moves="3/second;5/minute", rate_limit_address="100/minute")
    hits = ((limits.moves, "p"), (limits.address, "192.0.2.9"))

    async def go() -> None:
        async with sharing(limits) as shared:
            for _ in range(3):
                await limits.hit_all_async(hits)
            with pytest.raises(RateLimited) as refused:  # the fourth within the second
                await limits.hit_all_async(hits)
            assert refused.value.retry_after == 1
            assert limits.moves.message in refused.value.message
            assert shared.exchanges == 0  # decided without waiting for Redis
            await shared.flush()
            assert shared.exchanges == 1  # the four moves' windows in one call

    run(go())
    # The synchronous storage (the other routes') reads the same counts …
    per_second, per_minute = limits.moves.items
    address = limits.address.items[0]
    stats = limits.limiter.get_window_stats
    assert stats(per_second, "moves", "p").remaining == 0  # the refused move counted here …
    # … and, as the library's limiter does, a refused window stops the count: the windows
    # after it saw the three moves let through, not the refused one.
    assert stats(per_minute, "moves", "p").remaining == 2
    assert stats(address, "address", "192.0.2.9").remaining == 97


@needs_redis
def test_a_process_sees_the_others_counts_from_its_next_exchange() -> None:
    prefix = f"ph-test-{uuid.uuid4().hex[:12]}"
    one = _limits(redis_url=REDIS_URL, rate_limit_prefix=prefix, rate_limit_moves="4/minute")
    two = _limits(redis_url=REDIS_URL, rate_limit_prefix=prefix, rate_limit_moves="4/minute")
    hits = ((one.moves, "p"),)

    async def go() -> None:
        async with sharing(one) as one_shared, sharing(two) as two_shared:
            await one.hit_all_async(hits)
            await one.hit_all_async(hits)
            await one_shared.flush()
            await two.hit_all_async(hits)  # two has not heard of one's two yet
            await two_shared.flush()  # now it has: 3 of 4
            await two.hit_all_async(hits)
            with pytest.raises(RateLimited):
                await two.hit_all_async(hits)
            # One's last exchange said 2: one more is let through, late by one exchange …
            await one.hit_all_async(hits)
            await one_shared.flush()
            with pytest.raises(RateLimited):  # … and from its answer on, one refuses too
                await one.hit_all_async(hits)

    run(go())
    assert one.limiter.get_window_stats(one.moves.items[0], "moves", "p").remaining == 0


@needs_redis
def test_a_later_rule_refuses_with_its_own_message() -> None:
    limits = _on_redis(rate_limit_moves="50/second", rate_limit_address="2/minute")
    hits = ((limits.moves, "p"), (limits.address, "192.0.2.10"))

    async def go() -> None:
        async with sharing(limits):
            await limits.hit_all_async(hits)
            await limits.hit_all_async(hits)
            with pytest.raises(RateLimited) as refused:
                await limits.hit_all_async(hits)
            assert limits.address.message in refused.value.message
            assert 1 <= refused.value.retry_after <= 60

    run(go())


def test_an_unreachable_redis_leaves_the_moves_counted_in_this_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = _limits(rate_limit_moves="1/minute", redis_url="redis://127.0.0.1:1/0")

    async def go() -> None:
        async with sharing(limits) as shared:
            await limits.hit_all_async(((limits.moves, "p"),))
            await shared.flush()  # fails: warned once
            await limits.hit_all_async(((limits.moves, "q"),))
            await shared.flush()  # fails again within the quiet period: not warned
            with pytest.raises(RateLimited):  # still counted here
                await limits.hit_all_async(((limits.moves, "p"),))

    with caplog.at_level(logging.WARNING, "app.web.http.ratelimit"):
        run(go())
    warned = [r for r in caplog.records if "rate limits unavailable" in r.getMessage()]
    assert len(warned) == 1
    assert "in this process only" in warned[0].getMessage()


@needs_redis
def test_a_key_with_spaces_is_counted_under_a_quoted_key() -> None:
    # The exchange sends each window as a line of words; a key is never split there.
    limits = _on_redis(rate_limit_moves="100/minute", rate_limit_address="1/minute")
    hits = ((limits.moves, "p"), (limits.address, "bad address\twith\nspaces"))

    async def go() -> None:
        async with sharing(limits) as shared:
            await limits.hit_all_async(hits)
            await shared.flush()
            with pytest.raises(RateLimited) as refused:
                await limits.hit_all_async(hits)
            assert limits.address.message in refused.value.message

    run(go())
    stats = limits.limiter.get_window_stats
    quoted = "bad%20address%09with%0Aspaces"
    assert stats(limits.address.items[0], "address", quoted).remaining == 0
    assert stats(limits.moves.items[0], "moves", "p").remaining == 98
