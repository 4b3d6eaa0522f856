"""The pacer of app/web/turns.py: a few tasks a turn of the event loop, first come first served.

Turns are counted by tests/aio.py's ``Turns`` (a callback once a turn), so no clock is
involved."""

from __future__ import annotations

import asyncio

import pytest

from app.web.turns import Pacer
from tests.aio import Turns, run


def test_a_lone_caller_goes_on_at_once() -> None:
    async def scenario() -> tuple[int, int]:
        turns = Turns()
        pacer = Pacer(4)
        before = turns.count
        await pacer.turn()
        turns.stop()
        return before, turns.count

    before, after = run(scenario())
    assert after == before  # no turn passed


def test_a_crowd_goes_on_a_slice_a_turn_in_the_order_it_asked() -> None:
    async def scenario() -> list[tuple[int, int]]:
        turns = Turns()
        pacer = Pacer(8)
        went: list[tuple[int, int]] = []

        async def one(n: int) -> None:
            await pacer.turn()
            went.append((n, turns.count))

        await asyncio.gather(*(one(n) for n in range(50)))
        turns.stop()
        assert pacer.waiting == 0
        return went

    went = run(scenario())
    assert [n for n, _ in went] == list(range(50))  # first come, first served
    per_turn: dict[int, int] = {}
    for _, turn in went:
        per_turn[turn] = per_turn.get(turn, 0) + 1
    assert max(per_turn.values()) == 8  # never more than the slice in one turn
    assert len(per_turn) == 7  # 50 callers, 8 a turn


def test_a_cancelled_waiter_takes_no_place() -> None:
    async def scenario() -> list[int]:
        pacer = Pacer(1)
        went: list[int] = []

        async def one(n: int) -> None:
            await pacer.turn()
            went.append(n)

        tasks = [asyncio.create_task(one(n)) for n in range(4)]
        await asyncio.sleep(0)  # all four have asked: one went on, three wait
        tasks[1].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return went

    assert run(scenario()) == [0, 2, 3]


def test_the_waiters_of_a_future_go_on_a_slice_a_turn_once_it_is_done() -> None:
    """``after``: many tasks wait for one future; none wakes before it is done, then they go
    on a slice a turn in the order they asked, one cancelled meanwhile taking no place."""

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
        per_turn: dict[int, int] = {}
        for turn in results:
            if isinstance(turn, int):
                per_turn[turn] = per_turn.get(turn, 0) + 1
        return went, per_turn, woken_early

    went, per_turn, woken_early = run(scenario())
    assert not woken_early
    assert went == [n for n in range(40) if n != 3]
    assert max(per_turn.values()) == 8 and sum(per_turn.values()) == 39


def test_a_slice_has_room_for_one_at_least() -> None:
    with pytest.raises(ValueError):
        Pacer(0)
