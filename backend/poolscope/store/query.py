"""Reading charts: every series of a request in one query per storage tier, bucketed in SQL.

A range is answered from the coarsest tier that fits the chart's step: coarse rollups before
their high-water mark, 1-step rollups up to theirs, raw samples after it (the newest minutes of
a day-long chart are never missing). Each tier is read by a (series_id, ts) primary-key range.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Table, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.schemas import MetricsOut, SeriesOut
from poolscope.store.tables import samples, series

Aggregate = Literal["avg", "max", "min"]
# bucket -> [(value, count)]: one entry per tier that had data for the bucket.
Buckets = dict[int, dict[int, list[tuple[float, int]]]]


@dataclass(frozen=True, slots=True)
class Tier:
    table: Table
    step_s: float
    hwm: float | None  # completed up to (exclusive); None while the tier is empty


@dataclass(frozen=True, slots=True)
class StoreMarks:
    """What the store knows about its tiers, cached in-process (store/rollup.py keeps it current)."""

    fine: Tier
    coarse: Tier
    oldest_raw: float | None


def plan(
    marks: StoreMarks, start: float, end: float, step: float
) -> tuple[list[tuple[Tier, float, float]], float]:
    """The rollup segments [lo, hi) to read, coarsest first, and where raw samples take over."""
    hwm = marks.fine.hwm
    if hwm is None or start >= hwm:
        return [], start
    # Rollups answer the part before the high-water mark when the chart is coarser than a rollup
    # step anyway (faster, same average), or when raw data is gone.
    oldest = marks.oldest_raw
    if not (step >= marks.fine.step_s or oldest is None or start < oldest):
        return [], start
    segments: list[tuple[Tier, float, float]] = []
    lo = start
    coarse = marks.coarse
    if coarse.hwm is not None and step >= coarse.step_s and coarse.hwm > lo:
        hi = min(coarse.hwm, end)
        segments.append((coarse, lo, hi))
        lo = hi
    if hwm > lo and lo < end:
        hi = min(hwm, end)
        segments.append((marks.fine, lo, hi))
        lo = hi
    return segments, max(lo, hwm) if segments else start


async def query(
    conn: AsyncConnection,
    marks: StoreMarks,
    target: str,
    metrics: Sequence[str],
    start: float,
    end: float,
    step: float,
    agg: Aggregate,
) -> MetricsOut:
    series_rows = (
        await conn.execute(
            select(series.c.id, series.c.metric, series.c.labels).where(
                series.c.target == target, series.c.metric.in_(list(metrics))
            )
        )
    ).all()
    if not series_rows:
        return MetricsOut(from_=start, to=end, step_s=step, resolution="raw", series=[])
    ids = [r.id for r in series_rows]
    buckets: Buckets = {i: {} for i in ids}
    segments, raw_from = plan(marks, start, end, step)
    for n, (tier, lo, hi) in enumerate(segments):
        # The first segment also takes the rollup row that starts just before the range.
        await _collect_rollups(
            conn, tier, ids, lo - tier.step_s / 2 if n == 0 else lo, hi, start, step, agg, buckets
        )
    if raw_from <= end:
        await _collect_raw(conn, ids, raw_from, end, start, step, agg, buckets)
    out = []
    for row in series_rows:
        # Only buckets with data are returned; gaps stay gaps (the chart shows no line there).
        pts: list[tuple[float, float | None]] = [
            (round(start + b * step, 3), _combine(v, agg)) for b, v in sorted(buckets[row.id].items())
        ]
        out.append(SeriesOut(metric=row.metric, labels=json.loads(row.labels), points=pts))
    out.sort(key=lambda s: (s.metric, sorted(s.labels.items())))
    coarsest = max((t.step_s for t, _, _ in segments), default=None)
    return MetricsOut(
        from_=start,
        to=end,
        step_s=step,
        resolution="rollup" if segments else "raw",
        rollup_step_s=max(step, coarsest) if coarsest is not None else None,
        series=out,
    )


async def _collect_raw(conn, ids, lo, hi, origin, step, agg, buckets: Buckets) -> None:  # type: ignore[no-untyped-def]
    bucket = func.floor((samples.c.ts - origin) / step)
    value = func.avg(samples.c.value) if agg == "avg" else getattr(func, agg)(samples.c.value)
    stmt = (
        select(samples.c.series_id, bucket, value, func.count(samples.c.value))
        .where(samples.c.series_id.in_(ids), samples.c.ts >= lo, samples.c.ts <= hi)
        .group_by(samples.c.series_id, bucket)
    )
    for sid, b, v, n in await conn.execute(stmt):
        if v is not None:
            buckets[sid].setdefault(int(b), []).append((float(v), int(n)))


async def _collect_rollups(conn, tier: Tier, ids, lo, hi, origin, step, agg, buckets: Buckets) -> None:  # type: ignore[no-untyped-def]
    t = tier.table
    bucket = func.floor((t.c.ts - origin) / step)
    # Only the columns the aggregate needs: the grouping sorts every row read.
    value = {"avg": func.sum(t.c.sum), "max": func.max(t.c.max), "min": func.min(t.c.min)}[agg]
    stmt = (
        select(t.c.series_id, bucket, value, func.sum(t.c.count))
        .where(t.c.series_id.in_(ids), t.c.ts >= lo, t.c.ts < hi)
        .group_by(t.c.series_id, bucket)
    )
    avg = agg == "avg"
    for sid, b, v, n in await conn.execute(stmt):
        n = int(n or 0)
        if n == 0 or v is None:
            continue
        buckets[sid].setdefault(max(int(b), 0), []).append((float(v) / n if avg else float(v), n))


def _combine(parts: list[tuple[float, int]], agg: Aggregate) -> float:
    """Merge a bucket that got values from more than one tier."""
    if len(parts) == 1:
        return round(parts[0][0], 6)
    if agg == "max":
        return round(max(v for v, _ in parts), 6)
    if agg == "min":
        return round(min(v for v, _ in parts), 6)
    total = sum(n for _, n in parts)
    return round(sum(v * n for v, n in parts) / total, 6) if total else 0.0
