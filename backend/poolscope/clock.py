"""The clock of time-driven logic (scheduler, leases, guard, live feed, alert engine), injected.

Every service that waits for a moment or compares instants takes a `Clock`: the system's by
default, a test's own in tests (tests/clock.py), which moves only when the test advances it, so a
schedule, a lease's expiry or a guard's window is tested in milliseconds and never by sleeping.
Timeouts on I/O (a poll, a connect, a store write) stay on the event loop's real clock: they bound
how long the outside world may take, which no test clock can speed up.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: for intervals and deadlines."""
        ...

    def time(self) -> float:
        """Seconds since the epoch: for timestamps that are stored or shown."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once `seconds` have passed on this clock (at once for 0 or less)."""
        ...


class SystemClock:
    """The real clock: time.monotonic, time.time and asyncio.sleep."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0.0))


SYSTEM = SystemClock()
