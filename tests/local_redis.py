"""The machine's own Redis, for the tests that count through one (skipped where it is down)."""

from __future__ import annotations

import pytest
import redis

REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_up() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


needs_redis = pytest.mark.skipif(not redis_up(), reason="needs the local Redis at 127.0.0.1:6379")
