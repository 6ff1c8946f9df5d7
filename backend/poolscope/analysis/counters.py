"""Rates and windowed ratios from monotonic server counters, with resets treated as resets."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable


class CounterMemory:
    """Remembers the previous reading of each counter of one target to turn counters into rates.

    A counter that went down was reset (FLUSH THREAD_POOL_STATS, a server restart): that
    interval yields no rate rather than a negative one.
    """

    def __init__(self) -> None:
        self._last: dict[Hashable, tuple[float, float]] = {}
        self._rows: dict[Hashable, tuple[float, tuple[int, ...]]] = {}

    def rate(self, key: Hashable, now: float, value: float | None) -> float | None:
        if value is None:
            return None
        previous = self._last.get(key)
        self._last[key] = (now, value)
        if previous is None:
            return None
        then, old = previous
        elapsed = now - then
        if elapsed <= 0 or value < old:
            return None
        return (value - old) / elapsed

    def rates(self, key: Hashable, now: float, values: tuple[int, ...]) -> list[float | None]:
        """rate() of each of counters always read together (a row's), remembered as one reading
        under one key: what rate() gives for each under a key of its own, for one call."""
        previous = self._rows.get(key)
        self._rows[key] = (now, values)
        if previous is None or now <= previous[0]:
            return [None] * len(values)
        then, old = previous
        elapsed = now - then
        return [
            None if value < was else (value - was) / elapsed for value, was in zip(values, old, strict=True)
        ]

    def forget(self) -> None:
        """After a reconnect the server may have restarted: start over."""
        self._last.clear()
        self._rows.clear()


class WindowedRatio:
    """Δnumerator / Δdenominator over a sliding time window, never over the server's lifetime.

    Lifetime ratios from SHOW STATUS average over days of unrelated traffic.
    """

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._readings: deque[tuple[float, float, float]] = deque()

    def add(self, now: float, numerator: float | None, denominator: float | None) -> None:
        if numerator is None or denominator is None:
            return
        if self._readings and (numerator < self._readings[-1][1] or denominator < self._readings[-1][2]):
            self._readings.clear()  # counters reset
        self._readings.append((now, numerator, denominator))
        # Keep one reading at or before the window start so the window is fully covered.
        while len(self._readings) > 2 and self._readings[1][0] <= now - self.window_s:
            self._readings.popleft()

    def value(self) -> tuple[float | None, float]:
        """(ratio or None when the denominator did not move, seconds actually covered)."""
        if len(self._readings) < 2:
            return None, 0.0
        first, last = self._readings[0], self._readings[-1]
        covered = last[0] - first[0]
        d_den = last[2] - first[2]
        if d_den <= 0:
            return None, covered
        return (last[1] - first[1]) / d_den, covered
