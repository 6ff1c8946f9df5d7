"""The tests' clock (tests/clock.py), which the scheduler, lease, guard and feed tests stand on:
sleepers wake in the order of their deadlines, each at its own instant, and advance returns only
once what it woke has run up to its next sleep."""

from __future__ import annotations

import asyncio

import pytest

from poolscope.clock import SYSTEM
from tests.clock import FakeClock


async def test_sleepers_wake_in_deadline_order_each_at_its_instant():
    clock = FakeClock(start=1_000_000.0)
    woke: list[tuple[str, float, float]] = []

    async def sleeper(name: str, every: float, times: int) -> None:
        for _ in range(times):
            await clock.sleep(every)
            woke.append((name, clock.monotonic() - start, clock.time()))

    start = clock.monotonic()
    tasks = [asyncio.create_task(sleeper("fast", 0.3, 4)), asyncio.create_task(sleeper("slow", 0.5, 2))]
    await clock.settle(*tasks)
    assert clock.sleeping == 2 and not woke
    await clock.advance(0.99)
    assert [(n, round(at, 6)) for n, at, _ in woke] == [
        ("fast", 0.3),
        ("slow", 0.5),
        ("fast", 0.6),
        ("fast", 0.9),
    ]
    assert [round(wall - 1_000_000.0, 6) for *_, wall in woke] == [0.3, 0.5, 0.6, 0.9]
    assert clock.monotonic() - start == pytest.approx(0.99)
    await clock.advance(1.0)
    assert [n for n, *_ in woke][4:] == ["slow", "fast"] and all(t.done() for t in tasks)
    assert clock.sleeping == 0 and clock.next_deadline() is None


async def test_advance_waits_for_what_a_woken_task_does_before_it_sleeps_again():
    clock = FakeClock()
    rounds: list[int] = []

    async def service() -> None:
        for n in range(3):
            await clock.sleep(1.0)
            await asyncio.sleep(0.05)  # real I/O: a store round trip
            rounds.append(n)

    task = asyncio.create_task(service())
    await clock.settle(task)
    await clock.advance(1.0)
    assert rounds == [0]
    await clock.advance(2.0)
    assert rounds == [0, 1, 2] and task.done()


async def test_a_cancelled_sleeper_is_not_woken_and_time_never_goes_back():
    clock = FakeClock()
    task = asyncio.create_task(clock.sleep(1.0))
    await clock.settle(task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await clock.advance(2.0)
    assert clock.sleeping == 0
    with pytest.raises(ValueError):
        await clock.advance(-1.0)


async def test_a_woken_task_that_never_sleeps_again_fails_the_advance_in_bounded_time():
    clock = FakeClock(settle_timeout_s=0.2)
    blocked = asyncio.Event()

    async def stuck() -> None:
        await clock.sleep(1.0)
        await blocked.wait()

    task = asyncio.create_task(stuck(), name="stuck")
    await clock.settle(task)
    with pytest.raises(AssertionError, match=r"\['stuck'\] still busy"):
        await clock.advance(1.0)
    task.cancel()


async def test_the_system_clock_is_the_real_one():
    import time

    assert abs(SYSTEM.time() - time.time()) < 1 and abs(SYSTEM.monotonic() - time.monotonic()) < 1
    await SYSTEM.sleep(-1)  # at once
