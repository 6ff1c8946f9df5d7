"""Sliding-window rate limits kept in memory, keyed by (user, client address)."""

from __future__ import annotations

import math
import time
from collections import deque

# Bound on distinct keys kept: a flood of made-up user names cannot grow memory without limit.
MAX_KEYS = 10_000


class RateLimiter:
    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._hits: dict[tuple[str, ...], deque[float]] = {}

    def hit(self, key: tuple[str, ...], now: float | None = None) -> float | None:
        """Count one attempt; None when allowed, else the seconds until the next is allowed."""
        now = time.monotonic() if now is None else now
        hits = self._hits.get(key)
        if hits is None:
            if len(self._hits) >= MAX_KEYS:
                self._prune(now)
            hits = self._hits[key] = deque()
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        if len(hits) >= self.limit:
            return max(1.0, math.ceil(hits[0] + self.window_s - now))
        hits.append(now)
        return None

    def reset(self, key: tuple[str, ...]) -> None:
        self._hits.pop(key, None)

    def _prune(self, now: float) -> None:
        for key in [k for k, v in self._hits.items() if not v or v[-1] <= now - self.window_s]:
            del self._hits[key]
        if len(self._hits) >= MAX_KEYS:
            # Still full of live keys: drop the oldest half rather than refuse every new caller.
            for key in sorted(self._hits, key=lambda k: self._hits[k][-1])[: MAX_KEYS // 2]:
                del self._hits[key]
