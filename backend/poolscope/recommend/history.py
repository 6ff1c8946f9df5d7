"""Each target's history window for the rules, kept between evaluations.

An evaluation looks at recommend_window_s (300 s) of the rules' metrics every recommend_interval_s
(30 s) per target, and 270 s of it was read the time before. So each target's raw samples are
kept, and an evaluation reads only those since its last read (from `overlap_s` before it: a
poll's samples are committed up to a poll timeout after their timestamp), drops those that left
the window, and buckets them as store/query.py does a range it answers from raw samples: bucket
floor((ts - start) / step), the average of its values, round6. The rules get exactly the Window
a full query gives (tests/recommend/test_history.py compares both on real polls). Once per
window length, and whenever the store would answer from rollups, the full query is made instead.

Kept per target: one array of doubles per series aligned with the distinct sample timestamps
(NaN where a series has no value), ~50 KB for a 300 s window of 20 series at 1 s polls.
"""

from __future__ import annotations

import json
import math
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from poolscope.recommend.window import Window
from poolscope.store.query import Rounded
from poolscope.store.sql import SqlStore, chart_step

NAN = math.nan
# Per target, values kept (two doubles each, 640 KB): a 300 s window of ~130 series at 1 s polls.
MAX_KEPT_VALUES = 40_000


@dataclass
class _Kept:
    series: list[tuple[int, str, dict[str, str]]]  # (id, metric, labels) in query()'s order
    ts: list[float]  # the distinct sample timestamps held, ascending
    values: dict[int, array[float]]  # per series, aligned with ts; NaN: no value there
    # The same as the buckets' points Window adds up when a bucket holds only that value (_point).
    points: dict[int, array[float]]
    start: float  # every sample with start <= ts <= read_to is held
    read_to: float
    full_at: float  # the end of the last full read


class History:
    def __init__(
        self,
        store: SqlStore,
        metrics: Sequence[str],
        window_s: float,
        overlap_s: float,
        max_values: int = MAX_KEPT_VALUES,
    ) -> None:
        self.store = store
        self.max_values = max_values
        self.metrics = list(metrics)
        self.window_s = window_s
        self.overlap_s = overlap_s
        self._kept: dict[str, _Kept] = {}

    def forget(self, name: str) -> None:
        self._kept.pop(name, None)

    def targets(self) -> set[str]:
        return set(self._kept)

    async def window(self, name: str, start: float, end: float, points: int, min_step_s: float) -> Window:
        """What Window(start, end, store.query(name, metrics, start, end, points, "avg", min_step_s).series) holds."""
        step = chart_step(start, end, points, min_step_s)
        kept = self._kept.get(name)
        incremental = (
            kept is not None
            and kept.start <= start
            and kept.read_to <= end
            and end - kept.full_at < self.window_s
        )
        lo = max(start, kept.read_to - self.overlap_s) if incremental and kept is not None else start
        read = await self.store.raw_history(name, self.metrics, lo, end, start=start, step=step)
        if read is not None:
            series_rows, rows = read
            kept = _merge(kept if incremental else None, series_rows, rows, lo, start, end)
        if read is None or kept is None:  # rollups answer part of it, or a NaN value (see _merge)
            self._kept.pop(name, None)
            return await self._full(name, start, end, points, min_step_s)
        if len(kept.ts) * len(kept.series) <= self.max_values:
            self._kept[name] = kept
        else:  # very many series (thread groups) or a long window: read in full each time instead
            self._kept.pop(name, None)
        return Window.of_totals(start, end, _totals(kept, start, step))

    async def _full(self, name: str, start: float, end: float, points: int, min_step_s: float) -> Window:
        history = await self.store.query(name, self.metrics, start, end, points, "avg", min_step_s=min_step_s)
        return Window(start, end, history.series)


def _merge(
    kept: _Kept | None,
    series_rows: list[tuple[int, str, str]],
    rows: Sequence[Sequence[Any]],
    lo: float,
    start: float,
    end: float,
) -> _Kept | None:
    """The kept samples from start up to lo, then the rows read (lo <= ts <= end); None when a
    value is NaN (a bucket holding it averages to NaN: only the full query answers that)."""
    first, cut = (bisect_left(kept.ts, start), bisect_left(kept.ts, lo)) if kept is not None else (0, 0)
    old_ts = kept.ts[first:cut] if kept is not None else []
    new_ts = sorted({row[1] for row in rows})
    at = {t: i + len(old_ts) for i, t in enumerate(new_ts)}
    blank = array("d", [NAN])
    values: dict[int, array[float]] = {}
    points: dict[int, array[float]] = {}
    for sid, _metric, _labels in series_rows:
        old = (kept.values.get(sid), kept.points.get(sid)) if kept is not None else (None, None)
        for was, now in zip(old, (values, points), strict=True):
            now[sid] = (was[first:cut] if was is not None else blank * len(old_ts)) + blank * len(new_ts)
    rounded = Rounded()
    for sid, ts, value in rows:
        if value is not None:
            if value != value:
                return None
            values[sid][at[ts]] = value = float(value)
            points[sid][at[ts]] = _point(value, rounded)
    if kept is not None and len(kept.series) == len(values) and all(s[0] in values for s in kept.series):
        series = kept.series
    else:  # a series is new (a thread group appeared): parsed and sorted as query() sorts them
        labelled = [(sid, metric, json.loads(labels)) for sid, metric, labels in series_rows]
        series = sorted(labelled, key=lambda s: (s[1], sorted(s[2].items())))
    full_at = kept.full_at if kept is not None else end
    return _Kept(series, old_ts + new_ts, values, points, start, end, full_at)


def _totals(kept: _Kept, start: float, step: float) -> dict[str, list[float]]:
    """Each metric's per-poll totals (Window.totals) of store/query.py's answer for [start,
    read_to] at `step` from raw samples: bucketed, averaged and rounded as there, then summed across
    the metric's series in query()'s order, each total starting from 0.0, as Window sums them."""
    floor = math.floor
    buckets = [floor((t - start) / step) for t in kept.ts]
    # Runs of timestamps in one bucket (ascending, so they are next to each other): averaged.
    runs: list[tuple[int, int]] = []
    i = 0
    for j in range(1, len(buckets) + 1):
        if j == len(buckets) or buckets[j] != buckets[i]:
            if j - i > 1:
                runs.append((i, j))
            i = j
    rounded = Rounded()
    sums: dict[str, list[float]] = {}  # per bucket; NaN: no value yet
    for sid, metric, _labels in kept.series:
        points = kept.points[sid].tolist()
        if runs:
            values = kept.values[sid]
            for i, j in runs:  # SQL avg: of the values there, in time order
                present = [v for v in values[i:j] if v == v]
                average = sum(present) / len(present) if present else NAN
                points[i:j] = [_point(average, rounded)] + [NAN] * (j - i - 1)
        have = sums.get(metric)
        if have is None:
            sums[metric] = points
        else:  # a + b, as Window adds them (b already has its 0.0 added: the same sum)
            sums[metric] = [
                a if b != b else (a + b if a == a else b) for a, b in zip(have, points, strict=True)
            ]
    return {metric: [v for v in per_bucket if v == v] for metric, per_bucket in sums.items()}


def _point(value: float, rounded: Rounded) -> float:
    """A bucket's value as Window adds it up: query()'s point (round6, zeros as they are) plus 0.0,
    which is what Window's first addition does (-0.0 becomes 0.0); NaN where Window skips it."""
    if not math.isfinite(value):
        return NAN
    return 0.0 + rounded[value] if value else 0.0
