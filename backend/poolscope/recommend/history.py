"""Each target's history window for the rules, kept between evaluations.

An evaluation looks at recommend_window_s (300 s) of the rules' metrics every recommend_interval_s
(60 s) per target, and 240 s of it was read the time before. So each target's raw samples are
kept, and an evaluation reads only the samples after the last read's mark, drops those that left
the window, and buckets them as store/query.py does a range it answers from raw samples: bucket
floor((ts - start) / step), the average of its values, round6. The rules get the Window
a full query gives (tests/recommend/test_history.py compares both on real polls), but for a poll
committed more than RECENT_CHECK_S behind the mark, until the once-per-window count (below).

The mark is one the store vouches for (SqlStore.raw_history_to_latest): a poll's samples commit
in the transaction that sets the target's latest row to the poll's ts, and a target's polls are
stored one after the other (poller/scheduler.py waits for each write), so once the latest row
shows T every sample up to T is there. A read goes up to the window's end; the next one starts
after min(T, end) (what was held after it is read again: a poll that was being written may land
there). A latest row older than the mark (the target moved to a poller whose clock is behind),
a series that appeared, rollups answering part of the range or a NaN value: the full read instead.
Every read also counts the store's samples of the last RECENT_CHECK_S up to the mark, and once per
window length those from the window's start: a count other than the rows held (a poll committed
out of order, say by a poller that lost its lease while writing, or by a poller whose clock is
behind, after the latest row had moved past the mark again) makes the full read.

Kept per target: one array of doubles per series aligned with the distinct sample timestamps
(NaN where a series has no value), and per metric the sum of its series' bucket points at each
timestamp (what Window adds up for a bucket holding only that timestamp), which does not depend on
the bucket grid: an evaluation only averages the buckets that hold two timestamps.
"""

from __future__ import annotations

import json
import math
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.recommend.window import Window
from poolscope.store.query import round6
from poolscope.store.sql import SqlStore, chart_step

NAN = math.nan
# Per target, values kept (a double each, plus the metrics' sums): a 300 s window of ~130 series
# at 1 s polls.
MAX_KEPT_VALUES = 40_000
# A poll that commits behind the mark lands within this of it, unless a poller's clock is further
# behind (the target moved, a clock stepped back; the once-per-window count catches those): a poll
# timeout, a lease's handover and a stopping poller's last write.
RECENT_CHECK_S = 60.0
# Distinct values whose point (_point) is remembered across evaluations before the memo is dropped.
MAX_MEMO = 200_000


@dataclass
class _Kept:
    series: list[tuple[int, str, dict[str, str]]]  # (id, metric, labels) in query()'s order
    ids: set[int]
    ts: list[float]  # the distinct sample timestamps held, ascending
    rows: array[int]  # aligned with ts: the sample rows read there (NULL values too)
    values: dict[int, array[float]]  # per series, aligned with ts; NaN: no value there
    # Per metric, aligned with ts: its series' points (_point) summed in series order, as Window
    # sums a bucket holding only that timestamp; NaN where none of them has a value.
    sums: dict[str, array[float]]
    start: float
    read_to: float  # the mark: every sample with start <= ts <= read_to is held (later ones may be)
    checked_at: float  # the end of the last full read, or of the last count that matched


class _Points(dict[float, float]):
    """_point of each value, memoised: a hit is one dict lookup in C. NaN is a key only as the
    module's NAN object."""

    def __init__(self) -> None:
        super().__init__()
        # NaN is never equal to itself, but a dict finds a key by identity first: _merge puts this
        # very object where a value is NULL.
        self[NAN] = NAN

    def __missing__(self, x: float) -> float:
        point = _point(x)
        if x == x:
            self[x] = point
        return point


class History:
    def __init__(
        self, store: SqlStore, metrics: Sequence[str], window_s: float, max_values: int = MAX_KEPT_VALUES
    ) -> None:
        self.store = store
        self.max_values = max_values
        self.metrics = list(metrics)
        self.window_s = window_s
        self._kept: dict[str, _Kept] = {}
        self._points = _Points()
        self.full_reads = 0  # for tests and the bench: reads of a whole window

    def forget(self, name: str) -> None:
        self._kept.pop(name, None)

    def targets(self) -> set[str]:
        return set(self._kept)

    async def window(
        self,
        name: str,
        start: float,
        end: float,
        points: int,
        min_step_s: float,
        conn: AsyncConnection | None = None,
    ) -> Window:
        """What Window(start, end, store.query(name, metrics, start, end, points, "avg", min_step_s).series) holds.
        `conn`: the store's reads on that connection (SqlStore.reading())."""
        step = chart_step(start, end, points, min_step_s)
        kept = self._kept.pop(name, None)
        if kept is not None and not (kept.start <= start and kept.read_to <= end):
            kept = None
        if len(self._points) > MAX_MEMO:
            self._points = _Points()
        merged: _Kept | None = None
        for base in (kept, None) if kept is not None else (None,):
            check = base is not None and end - base.checked_at >= self.window_s
            # Every read counts the samples of the last RECENT_CHECK_S before the mark; once per
            # window, all of them from the window's start.
            lo = start if check or base is None else max(start, base.read_to - RECENT_CHECK_S)
            read = await self.store.raw_history_to_latest(
                name,
                self.metrics,
                max(start, math.nextafter(base.read_to, math.inf)) if base is not None else start,
                end,
                start=start,
                step=step,
                with_series=base is None,
                count=(lo, base.read_to) if base is not None else None,
                conn=conn,
            )
            if read is None or read.latest is None:  # rollups answer part of it, or no latest row
                break
            if base is not None and (
                read.latest < base.read_to
                or not {row[0] for row in read.rows} <= base.ids
                or read.count != sum(base.rows[bisect_left(base.ts, lo) : _cut(base)])
            ):
                continue  # the mark went back, a series appeared, or a sample came late: read it all
            self.full_reads += base is None
            checked_at = end if base is None or check else base.checked_at
            merged = _merge(
                base, read.series or [], read.rows, start, min(read.latest, end), checked_at, self._points
            )
            if merged is not None and len(merged.ts) * len(merged.series) <= self.max_values:
                # Else very many series (thread groups) or a long window: read in full each time.
                self._kept[name] = merged
            break
        if merged is None:  # rollups answer part of it, no latest row, or a NaN value (see _merge)
            return await self._full(name, start, end, points, min_step_s)
        return Window.of_totals(start, end, _totals(merged, start, step, self._points))

    async def _full(self, name: str, start: float, end: float, points: int, min_step_s: float) -> Window:
        history = await self.store.query(name, self.metrics, start, end, points, "avg", min_step_s=min_step_s)
        return Window(start, end, history.series)


def _merge(
    kept: _Kept | None,
    series_rows: list[tuple[int, str, str]],
    rows: Sequence[Sequence[Any]],
    start: float,
    read_to: float,
    checked_at: float,
    memo: _Points,
) -> _Kept | None:
    """The kept samples from start up to kept.read_to, then the rows read (all after it, or all
    of them when nothing is kept) by series then time; None when a value is NaN (a bucket holding
    it averages to NaN: only the full query answers that). `read_to`: the new mark."""
    first, cut = (bisect_left(kept.ts, start), _cut(kept)) if kept is not None else (0, 0)
    if rows:
        ids, stamps, raw = zip(*rows, strict=True)
    else:
        ids, stamps, raw = (), (), ()
    new_ts = sorted(set(stamps))
    dense = tuple(new_ts)
    at: dict[float, int] | None = None
    blank = array("d", [NAN]) * len(new_ts)
    if kept is not None:
        series = kept.series
    else:  # parsed and sorted as query() sorts them
        labelled = [(sid, metric, json.loads(labels)) for sid, metric, labels in series_rows]
        series = sorted(labelled, key=lambda s: (s[1], sorted(s[2].items())))
    values: dict[int, array[float]] = {}
    new_sums: dict[str, list[float]] = {}
    points_of = memo.__getitem__
    # The values with NULL (no value) as NaN, which is what "no value" is in `values`: the NULLs
    # placed by index (a few per read), not each value tested.
    vals = list(raw)
    nulls = []
    at_null = -1
    for _ in range(vals.count(None)):
        at_null = vals.index(None, at_null + 1)
        nulls.append(at_null)
        vals[at_null] = 0.0
    # A NaN stored (the sum is NaN; or infinities of both signs, then no value is NaN): a bucket
    # holding it averages to NaN, which only the full query answers.
    if math.isnan(sum(vals)) and any(map(math.isnan, vals)):
        return None
    for i in nulls:
        vals[i] = NAN  # the one NaN object: the memo's key for it (_Points)
    every = array("d", vals)
    every_points = list(map(points_of, vals))
    # Rows per timestamp: each series with a value at every new timestamp adds one to all.
    placed = array("l", [0]) * len(new_ts)
    dense_series = 0
    for sid, metric, _labels in series:
        a = bisect_left(ids, sid)
        b = bisect_right(ids, sid, a)
        if b - a == len(dense) and stamps[a:b] == dense:  # most series: a value at every new timestamp
            got, points = every[a:b], every_points[a:b]
            dense_series += 1
        else:  # placed one by one; NaN where the series has no value
            if at is None:
                at = {t: i for i, t in enumerate(new_ts)}
            got = array("d", blank)
            for t, v in zip(stamps[a:b], every[a:b], strict=True):
                i = at[t]
                got[i] = v
                placed[i] += 1
            points = list(map(points_of, got))
        values[sid] = kept.values[sid][first:cut] + got if kept is not None else got
        have = new_sums.get(metric)
        # a + b, as Window adds them (b already has its 0.0 added: the same sum)
        new_sums[metric] = (
            points
            if have is None
            else [a if b != b else (a + b if a == a else b) for a, b in zip(have, points, strict=True)]
        )
    sums = {
        metric: (kept.sums[metric][first:cut] + array("d", new)) if kept is not None else array("d", new)
        for metric, new in new_sums.items()
    }
    counts = array("l", [n + dense_series for n in placed])
    if sum(counts) != len(rows):  # rows of a series not in `series` (not expected): counted as read
        per_ts = Counter(stamps)
        counts = array("l", map(per_ts.__getitem__, new_ts))
    if kept is not None:
        return _Kept(
            series,
            kept.ids,
            kept.ts[first:cut] + new_ts,
            kept.rows[first:cut] + counts,
            values,
            sums,
            start,
            read_to,
            checked_at,
        )
    return _Kept(series, {s[0] for s in series}, new_ts, counts, values, sums, start, read_to, checked_at)


def _cut(kept: _Kept) -> int:
    """Where the timestamps after the mark begin (read again by the next read)."""
    return bisect_right(kept.ts, kept.read_to)


def _totals(kept: _Kept, start: float, step: float, memo: _Points) -> dict[str, list[float]]:
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
    by_metric: dict[str, list[int]] = {}
    for sid, metric, _labels in kept.series:
        by_metric.setdefault(metric, []).append(sid)
    out: dict[str, list[float]] = {}
    for metric, per_ts in kept.sums.items():
        totals = per_ts.tolist()
        for i, j in reversed(runs):  # reversed: a run's replacement leaves the earlier ones in place
            total = NAN
            for sid in by_metric[metric]:
                present = [v for v in kept.values[sid][i:j] if v == v]  # SQL avg: in time order
                point = memo[sum(present) / len(present)] if present else NAN
                if point == point:
                    total = total + point if total == total else point
            totals[i:j] = [total]
        total_sum = sum(totals)
        out[metric] = totals if total_sum == total_sum else [v for v in totals if v == v]
    return out


def _point(value: float) -> float:
    """A bucket's value as Window adds it up: query()'s point (round6, zeros as they are) plus 0.0,
    which is what Window's first addition does (-0.0 becomes 0.0); NaN where Window skips it."""
    if not math.isfinite(value):
        return NAN
    return 0.0 + round6(value) if value else 0.0
