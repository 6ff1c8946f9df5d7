"""The tests' clock (poolscope/clock.py's Clock): time moves only when the test advances it.

    clock = FakeClock()
    keeper = LeaseKeeper(engine, "a", names, clock=clock, store_clock=clock.store_now)
    keeper.start()
    await clock.advance(keeper.renew_s)   # one more lease round, at once

`advance` moves time forward to each sleeper's deadline in turn, wakes that sleeper and waits
(bounded, in real time) until the task it woke has slept on this clock again or ended: what a
round of a service does at an instant has happened when advance returns. Real I/O inside the round
(a store, a replayed server) still takes its real time; only the waits between rounds are skipped.
A task that the clock did not wake (one the test just created, a poll loop a lease round started)
is waited for with `settle(task, ...)`.
Several services on one clock (two pollers, their lease keepers, an alert engine) see the same
instants in the same order on every run.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Any

# How long a woken task may take to reach its next sleep (a store round trip on a loaded machine).
SETTLE_TIMEOUT_S = 30.0
# An arbitrary start on the monotonic scale: nothing may assume it starts at 0.
_MONOTONIC_START = 1_000.0


class FakeClock:
    def __init__(self, start: float | None = None, settle_timeout_s: float = SETTLE_TIMEOUT_S) -> None:
        """`start`: the epoch time it shows first (by default the real time now, in whole seconds,
        so that what a test stores is recent for the store's retention)."""
        self.settle_timeout_s = settle_timeout_s
        self._now = _MONOTONIC_START
        self._epoch_offset = (float(int(time.time())) if start is None else start) - _MONOTONIC_START
        self._sleepers: list[tuple[float, int, asyncio.Future[None], asyncio.Task[Any] | None]] = []
        self._order = itertools.count()
        self._woken: set[asyncio.Task[Any]] = set()

    # --- the Clock protocol -----------------------------------------------------------------

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._now + self._epoch_offset

    async def sleep(self, seconds: float) -> None:
        task = asyncio.current_task()
        self._woken.discard(task)  # type: ignore[arg-type]
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._order), future, task))
        await future  # a cancelled sleeper's entry is skipped when its deadline comes

    # --- for the test -------------------------------------------------------------------------

    async def store_now(self, conn: object) -> float:
        """The store's clock as this one (poolscope/fleet/leases.py StoreClock)."""
        return self.time()

    @property
    def sleeping(self) -> int:
        """Tasks asleep on this clock now."""
        return sum(1 for *_, future, _task in self._sleepers if not future.done())

    def next_deadline(self) -> float | None:
        """When the next sleeper wakes (monotonic), or None when none sleeps."""
        self._drop_cancelled()
        return self._sleepers[0][0] if self._sleepers else None

    async def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, waking every sleeper whose deadline comes, in order."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        end = self._now + seconds
        await self.settle()
        while True:
            self._drop_cancelled()
            if not self._sleepers or self._sleepers[0][0] > end:
                break
            due = self._sleepers[0][0]
            self._now = max(self._now, due)
            while self._sleepers and self._sleepers[0][0] <= due:  # all due at this instant
                *_, future, task = heapq.heappop(self._sleepers)
                if not future.done():
                    future.set_result(None)
                    if task is not None:
                        self._woken.add(task)
            await self.settle()
        self._now = end

    async def settle(self, *tasks: asyncio.Task[Any]) -> None:
        """Until `tasks`, and every task this clock woke, sleep on it or have ended (bounded, in
        real time)."""
        self._woken.update(t for t in tasks if not self._asleep(t))
        deadline = time.monotonic() + self.settle_timeout_s
        for _ in range(3):
            await asyncio.sleep(0)
        while self._woken:
            self._woken = {t for t in self._woken if not t.done()}
            if not self._woken:
                break
            if time.monotonic() > deadline:
                names = sorted(t.get_name() for t in self._woken)
                raise AssertionError(f"clock: {names} still busy {self.settle_timeout_s:g} s after waking")
            await asyncio.sleep(0.001)  # real: a store's thread or socket may be answering

    def _asleep(self, task: asyncio.Task[Any]) -> bool:
        return any(t is task and not f.done() for *_, f, t in self._sleepers)

    def _drop_cancelled(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
