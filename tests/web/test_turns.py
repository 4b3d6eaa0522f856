"""The pacer of app/web/turns.py: the tasks waiting for one future go on a few a turn of the
event loop, first come first served, once it is done.

Turns are counted by tests/aio.py's ``Turns`` (a callback once a turn), so no clock is
involved."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.web.turns import Pacer
from tests.aio import Turns, run


def _per_turn(turns: Sequence[object]) -> dict[int, int]:
    counted: dict[int, int] = {}
    for turn in turns:
        if isinstance(turn, int):
            counted[turn] = counted.get(turn, 0) + 1
    return counted


def test_the_waiters_of_a_future_go_on_a_slice_a_turn_once_it_is_done() -> None:
    """Many tasks wait for one future; none wakes before it is done, then they go on a slice
    a turn in the order they asked, one cancelled meanwhile taking no place."""

    async def scenario() -> tuple[list[int], dict[int, int], bool]:
        pacer = Pacer(8)
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        went: list[int] = []
        turns = Turns()

        async def one(n: int) -> int:
            await pacer.after(done)
            went.append(n)
            return turns.count

        tasks = [asyncio.create_task(one(n)) for n in range(40)]
        for _ in range(5):
            await asyncio.sleep(0)
        woken_early = bool(went)
        tasks[3].cancel()
        done.set_result("room")
        results = await asyncio.gather(*tasks, return_exceptions=True)
        turns.stop()
        assert pacer.waiting == 0
        return went, _per_turn(results), woken_early

    went, per_turn, woken_early = run(scenario())
    assert not woken_early
    assert went == [n for n in range(40) if n != 3]  # first come, first served
    assert max(per_turn.values()) == 8 and sum(per_turn.values()) == 39
    assert len(per_turn) == 5  # 39 tasks, 8 a turn


def test_a_waiter_of_a_future_already_done_goes_on() -> None:
    async def scenario() -> str:
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        done.set_result("room")
        await Pacer(1).after(done)
        return done.result()

    assert run(scenario()) == "room"


def test_a_failed_or_cancelled_future_releases_its_waiters_too() -> None:
    async def scenario() -> list[bool]:
        pacer = Pacer(2)
        loop = asyncio.get_running_loop()
        failed: asyncio.Future[str] = loop.create_future()
        cancelled: asyncio.Future[str] = loop.create_future()
        waiting = [asyncio.create_task(pacer.after(f)) for f in (failed, cancelled) * 3]
        await asyncio.sleep(0)
        failed.set_exception(RuntimeError("database away"))
        cancelled.cancel()
        await asyncio.gather(*waiting)  # the waiters themselves are not failed
        return [failed.done(), cancelled.cancelled()]

    assert run(scenario()) == [True, True]


def test_a_slice_has_room_for_one_at_least() -> None:
    with pytest.raises(ValueError):
        Pacer(0)
