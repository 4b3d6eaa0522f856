"""Running a coroutine from a test."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    """asyncio.run on a thread of its own: the browser tests' Playwright may keep a loop
    running on this one (in the same pytest worker), where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=timeout)
