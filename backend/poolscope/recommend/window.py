"""A window of metric history for rules: per-poll totals across labels, and plain statistics."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterable

from poolscope.schemas import SeriesOut


class Window:
    def __init__(self, start: float, end: float, series: Iterable[SeriesOut]) -> None:
        self.start = start
        self.end = end
        self._by_metric: dict[str, list[SeriesOut]] = {}
        for item in series:
            self._by_metric.setdefault(item.metric, []).append(item)
        # Each metric's totals, summed once: rules ask for the same metric's count, mean and peak.
        self._totals: dict[str, list[float]] = {}
        self._sorted_totals: dict[str, list[float]] = {}

    @classmethod
    def of_totals(cls, start: float, end: float, totals: dict[str, list[float]]) -> Window:
        """A window given each metric's per-poll totals (as totals() would sum them from its series)."""
        window = cls(start, end, ())
        window._totals = totals
        return window

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def totals(self, metric: str) -> list[float]:
        """One value per poll: the sum across label sets (e.g. all thread groups)."""
        return list(self._summed(metric))

    def _summed(self, metric: str) -> list[float]:
        summed = self._totals.get(metric)
        if summed is None:
            per_ts: dict[float, float] = {}
            for item in self._by_metric.get(metric, []):
                for ts, value in item.points:
                    if value is not None and math.isfinite(value):
                        per_ts[ts] = per_ts.get(ts, 0.0) + value
            summed = self._totals[metric] = [per_ts[ts] for ts in sorted(per_ts)]
        return summed

    def count(self, metric: str) -> int:
        return len(self._summed(metric))

    def mean(self, metric: str) -> float | None:
        values = self._summed(metric)
        return sum(values) / len(values) if values else None

    def peak(self, metric: str) -> float | None:
        values = self._summed(metric)
        return max(values) if values else None

    def fraction(self, metric: str, condition: Callable[[float], bool]) -> float | None:
        values = self._summed(metric)
        return sum(1 for v in values if condition(v)) / len(values) if values else None

    def fraction_above(self, metric: str, threshold: float) -> float | None:
        """fraction(metric, lambda v: v > threshold), by bisecting the sorted totals (kept for the
        other rules asking): a Python call per poll was half the rules' time."""
        values = self._sorted(metric)
        return (len(values) - bisect_right(values, threshold)) / len(values) if values else None

    def _sorted(self, metric: str) -> list[float]:
        done = self._sorted_totals.get(metric)
        if done is None:
            done = self._sorted_totals[metric] = sorted(self._summed(metric))
        return done

    def quantile(self, metric: str, q: float) -> float | None:
        values = self._sorted(metric)
        if not values:
            return None
        return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]
