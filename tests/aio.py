"""Running a coroutine from a test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    """asyncio.run on a thread of its own: the browser tests' Playwright may keep a loop
    running on this one (in the same pytest worker), where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=timeout)


async def until(condition: Callable[[], object]) -> None:
    """Lets the other tasks run until ``condition()`` holds, no clock involved; fails after
    10,000 turns of the loop."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("never came to pass")


class Turns:
    """Counts the turns of the running event loop, no clock involved: a callback that runs
    once a turn (calling ``each``, if given) and schedules itself for the next, until
    :meth:`stop`."""

    def __init__(self, each: Callable[[], None] | None = None) -> None:
        self.count = 0
        self.each = each
        self._loop = asyncio.get_running_loop()
        self._going = True
        self._loop.call_soon(self._tick)

    def _tick(self) -> None:
        self.count += 1
        if self.each is not None:
            self.each()
        if self._going:
            self._loop.call_soon(self._tick)

    def stop(self) -> None:
        self._going = False
