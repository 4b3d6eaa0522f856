"""Turns of the event loop, handed out a few tasks at a time.

A room event wakes every html stream of a process at once: they all await the one read of the
room (app/web/pages/rooms.py, :class:`LiveFragments`), and when it comes in, asyncio runs all of
them, each rendering and sending its copy, in a single turn of the loop. With 500 streams in a
process (a worker's share of a thousand) that turn lasted 14–18 ms (``bench/fanout.py
--turns``), and every move of the worker that became ready meanwhile (its request read, its
database answer in) waited behind it. A :class:`Pacer` lets ``per_turn`` of the waiting tasks
on each turn, in the order they asked, so that whatever else is ready runs between the slices.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any


class Pacer:
    """At most ``per_turn`` of the tasks waiting in :meth:`after` go on in one turn of the event
    loop; the others wait, first come first served, for the next turns. Belongs to one event
    loop."""

    def __init__(self, per_turn: int) -> None:
        if per_turn < 1:
            raise ValueError("per_turn must be at least 1")
        self.per_turn = per_turn
        self._granted = 0  # tasks let on this turn; > 0 means _next_turn is scheduled
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def after(self, future: asyncio.Future[Any]) -> None:
        """Waits until ``future`` is done, then for a turn with room, after the tasks queued
        before, without waking in between: the many tasks that wait for one future are queued
        as it completes (a few microseconds each), not all woken in one turn."""
        waiter = asyncio.get_running_loop().create_future()

        def queue(_: asyncio.Future[Any]) -> None:
            if waiter.done():
                return  # the waiting task was cancelled
            if self._has_room():
                self._grant()
                waiter.set_result(None)
            else:
                self._waiting.append(waiter)

        future.add_done_callback(queue)
        try:
            await waiter  # cancelled: _next_turn skips it
        finally:
            future.remove_done_callback(queue)

    def _has_room(self) -> bool:
        return self._granted < self.per_turn and not self._waiting

    def _grant(self) -> None:
        if self._granted == 0:
            asyncio.get_running_loop().call_soon(self._next_turn)
        self._granted += 1

    def _next_turn(self) -> None:
        self._granted = 0
        waiting = self._waiting
        while waiting and self._granted < self.per_turn:
            waiter = waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # its task runs on the next turn
                self._granted += 1
        if self._granted:
            # Scheduled after the wake-ups just made: the next slice goes once they have run.
            asyncio.get_running_loop().call_soon(self._next_turn)

    @property
    def waiting(self) -> int:
        return len(self._waiting)
