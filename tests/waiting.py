"""Waiting on a condition, never on a length of time: the wait ends as soon as the condition
holds, and the deadline is only there so that a broken test fails instead of hanging."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], what: str, seconds: float = 30.0) -> None:
    """Return once ``condition()`` is true; fail, saying ``what`` did not happen, after
    ``seconds`` (a generous bound for a loaded machine, not a guess at how long it takes)."""
    deadline = time.monotonic() + seconds
    pause = threading.Event()
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        pause.wait(0.01)


async def wait_until_async(
    condition: Callable[[], object], what: str, seconds: float = 30.0
) -> None:
    """:func:`wait_until` on an event loop: the loop's other tasks run between the checks."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        await asyncio.sleep(0.01)
