"""Sliding-window rate limits kept in memory, keyed by a tuple (user, client address, ...)."""

from __future__ import annotations

import math
from collections import deque

from poolscope.clock import SYSTEM, Clock

# Bound on distinct keys kept: a flood of made-up user names cannot grow memory without limit.
MAX_KEYS = 10_000


class RateLimiter:
    def __init__(self, limit: int, window_s: float, clock: Clock = SYSTEM) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._hits: dict[tuple[str, ...], deque[float]] = {}
        self.refused = 0  # hits refused so far (for /metrics)

    def hit(self, key: tuple[str, ...]) -> float | None:
        """Count one attempt; None when allowed, else the seconds until the next is allowed."""
        wait = self.wait(key)
        if wait is None:
            self.record(key)
        else:
            self.refused += 1
        return wait

    def wait(self, key: tuple[str, ...]) -> float | None:
        """None when `key` is under its limit now, else the seconds until it is (nothing counted)."""
        now = self.clock.monotonic()
        hits = self._recent(key, now)
        if hits is None or len(hits) < self.limit:
            return None
        return max(1.0, math.ceil(hits[0] + self.window_s - now))

    def record(self, key: tuple[str, ...]) -> None:
        now = self.clock.monotonic()
        hits = self._recent(key, now)
        if hits is None:
            if len(self._hits) >= MAX_KEYS:
                self._prune(now)
            hits = self._hits[key] = deque()
        hits.append(now)

    def over_limit(self) -> int:
        """Keys at their limit now (a gauge for /metrics)."""
        return sum(1 for key in list(self._hits) if self.wait(key) is not None)

    def _recent(self, key: tuple[str, ...], now: float) -> deque[float] | None:
        hits = self._hits.get(key)
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        return hits

    def _prune(self, now: float) -> None:
        for key in [k for k, v in self._hits.items() if not v or v[-1] <= now - self.window_s]:
            del self._hits[key]
        if len(self._hits) >= MAX_KEYS:
            # Still full of live keys: drop the oldest half rather than refuse every new caller.
            for key in sorted(self._hits, key=lambda k: self._hits[k][-1])[: MAX_KEYS // 2]:
                del self._hits[key]
