"""Login limits that slow guessing down without handing anyone a lockout of someone else.

- Per client address and user name: after FREE_FAILURES wrong passwords in a row, each next try
  from that address for that name waits twice as long as the last (1 s, 2 s, 4 s ... up to
  MAX_BACKOFF_S); a right password ends it. One try at a time per pair, so firing many at once
  gains nothing.
- Per address, across names: an address with `per_address` wrong passwords in the last minute
  waits (spraying names). Only wrong passwords count: an address that has not failed passes.
- Per name, across addresses: a name with `per_name` wrong passwords in the last minute is under
  attack; every try for it is then answered SLOWDOWN_S later, whoever sends it, and is never
  refused for that: the real user, from an address that has not failed, still logs in.

Every refusal and slowdown is counted for /metrics (api/prometheus.py).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from poolscope.auth.ratelimit import RateLimiter
from poolscope.clock import SYSTEM, Clock

FREE_FAILURES = 3
BASE_BACKOFF_S = 1.0
MAX_BACKOFF_S = 300.0
# A pair's failures are forgotten this long after the last one (no lifelong penalty).
FORGET_S = 900.0
SLOWDOWN_S = 1.0
WINDOW_S = 60.0
# Bound on pairs kept: a flood of made-up names cannot grow memory without limit.
MAX_PAIRS = 10_000


@dataclass
class _Failures:
    count: int
    last: float


class LoginLimits:
    def __init__(self, per_name: int, per_address: int, clock: Clock = SYSTEM) -> None:
        self.clock = clock
        self.per_name = per_name
        self._pairs: dict[tuple[str, str], _Failures] = {}
        self._in_flight: set[tuple[str, str]] = set()
        self._by_address = RateLimiter(per_address, WINDOW_S, clock)
        self._by_name = RateLimiter(per_name, WINDOW_S, clock)
        # What /metrics shows: attempts by outcome, refusals by limit, slowed tries.
        self.outcomes: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.slowed = 0

    def refusal(self, address: str, name: str) -> tuple[str, float] | None:
        """(limit, seconds to wait) when this try is refused now, else None (and it is in flight)."""
        now = self.clock.monotonic()
        pair = (address, name)
        wait: tuple[str, float] | None = None
        if pair in self._in_flight:
            wait = ("login_in_flight", 1.0)
        elif (until := self._backoff_until(pair, now)) is not None and until > now:
            wait = ("login_backoff", until - now)
        elif (seconds := self._by_address.wait((address,))) is not None:
            wait = ("login_address", seconds)
        if wait is not None:
            self.refused[wait[0]] += 1
            return wait[0], max(1.0, math.ceil(wait[1]))
        self._in_flight.add(pair)
        return None

    def slowdown_s(self, name: str) -> float:
        """How long to hold this try back: SLOWDOWN_S while the name is under attack, else 0."""
        if self._by_name.wait((name,)) is None:
            return 0.0
        self.slowed += 1
        return SLOWDOWN_S

    def failed(self, address: str, name: str) -> None:
        pair = (address, name)
        self._in_flight.discard(pair)
        self.outcomes["wrong"] += 1
        now = self.clock.monotonic()
        known = self._pairs.get(pair)
        if known is None or now - known.last > FORGET_S:
            if len(self._pairs) >= MAX_PAIRS:
                self._prune(now)
            known = self._pairs[pair] = _Failures(0, now)
        known.count += 1
        known.last = now
        self._by_address.record((address,))
        self._by_name.record((name,))

    def succeeded(self, address: str, name: str) -> None:
        pair = (address, name)
        self._in_flight.discard(pair)
        self._pairs.pop(pair, None)
        self.outcomes["ok"] += 1

    def abandoned(self, address: str, name: str) -> None:
        """A try that ended without an answer (the client went away): no longer in flight."""
        self._in_flight.discard((address, name))

    def backoff_pairs(self) -> int:
        """Address and name pairs that must wait now (a gauge for /metrics)."""
        now = self.clock.monotonic()
        return sum(1 for pair in self._pairs if (self._backoff_until(pair, now) or 0) > now)

    def names_under_attack(self) -> int:
        return self._by_name.over_limit()

    def _backoff_until(self, pair: tuple[str, str], now: float) -> float | None:
        known = self._pairs.get(pair)
        if known is None or known.count < FREE_FAILURES or now - known.last > FORGET_S:
            return None
        return known.last + min(BASE_BACKOFF_S * 2 ** (known.count - FREE_FAILURES), MAX_BACKOFF_S)

    def _prune(self, now: float) -> None:
        for pair in [p for p, f in self._pairs.items() if now - f.last > FORGET_S]:
            del self._pairs[pair]
        if len(self._pairs) >= MAX_PAIRS:
            for pair in sorted(self._pairs, key=lambda p: self._pairs[p].last)[: MAX_PAIRS // 2]:
                del self._pairs[pair]
