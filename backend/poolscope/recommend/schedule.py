"""When each target's recommendations are evaluated next (recommend/engine.py runs them)."""

from __future__ import annotations

from poolscope.config import Settings


class RecommendSchedule:
    """When each target's rules run next: every recommend_interval_s once evaluated, spread
    evenly over that interval so a fleet's history queries do not come in one burst.

    A target not yet evaluated (its first poll not stored yet) is looked at again after a poll
    interval, so recommendations appear soon after start-up whatever the interval.
    """

    def __init__(self, names: list[str], settings: Settings) -> None:
        self.interval_s = settings.recommend_interval_s
        self.retry_s = settings.poll_interval_s
        self._next: dict[str, float] = {}
        self._evaluated: set[str] = set()
        self.sync(names)

    def sync(self, names: list[str]) -> None:
        """Follow the configured targets: a new one is due at once, a removed one is forgotten."""
        self._slot = {name: (index + 1) / len(names) for index, name in enumerate(names)}
        self._next = {name: self._next.get(name, 0.0) for name in names}
        self._evaluated &= set(names)

    def due(self, now: float) -> list[str]:
        return [name for name, at in self._next.items() if at <= now]

    def done(self, name: str, now: float, *, evaluated: bool) -> None:
        if not evaluated:
            self._next[name] = now + self.retry_s
        elif name not in self._evaluated:
            self._evaluated.add(name)
            self._next[name] = now + self.interval_s * self._slot[name]
        else:
            self._next[name] = now + self.interval_s

    def soon(self, name: str) -> None:
        if name in self._next:
            self._next[name] = 0.0

    def next_at(self, now: float) -> float:
        return min(self._next.values(), default=now + self.interval_s)
