"""Reading charts: every series of a request in one query per storage tier, bucketed in SQL.

A range is answered from the coarsest tier that fits the chart's step: coarse rollups before
their high-water mark, 1-step rollups up to theirs, raw samples after it (the newest minutes of
a day-long chart are never missing). Each tier is read by a (series_id, ts) primary-key range.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Select, Table, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.schemas import MetricsOut, SeriesOut
from poolscope.store.tables import samples, series

Aggregate = Literal["avg", "max", "min"]
# series id -> bucket -> (value, samples in it)
Buckets = dict[int, dict[int, tuple[float, int]]]


# How much wider than asked a chart's step may get to read a coarser tier.
COARSER_BY = 1.25


@dataclass(frozen=True, slots=True)
class Tier:
    table: Table
    step_s: float
    hwm: float | None  # completed up to (exclusive); None while the tier is empty


@dataclass(frozen=True, slots=True)
class StoreMarks:
    """What the store knows about its tiers, cached in-process (store/rollup.py keeps it current)."""

    tiers: tuple[Tier, ...]  # the rollup step first, then coarser ones, each a multiple of it
    oldest_raw: float | None


@dataclass(frozen=True, slots=True)
class Plan:
    step: float  # bucket width
    origin: float  # bucket 0 starts here
    segments: list[tuple[Tier, float, float]]  # rollups to read [lo, hi), coarsest first
    raw_from: float


def plan(marks: StoreMarks, start: float, end: float, step: float) -> Plan:
    """Which tiers answer which part of the range, and the bucket grid.

    Rollups answer the part before the high-water mark when the chart is coarser than a rollup
    step anyway, or when raw data is gone. When the chart is coarser, the step is rounded up to a
    whole number of rollup steps (never more points than asked) and buckets are aligned to it, so
    every rollup row falls in one bucket and a bucket's average is exactly that of its raw samples;
    the coarsest tier whose rows fit the step whole is read (one row per point on a day chart).
    Until a coarser tier's high-water mark, finer tiers that fit the step whole fill in.
    """
    fine = marks.tiers[0]
    hwm = fine.hwm
    oldest = marks.oldest_raw
    if hwm is None or start >= hwm or not (step >= fine.step_s or oldest is None or start < oldest):
        return Plan(step, start, [], start)
    if step < fine.step_s:  # raw data is gone: rollup rows land in the chart's own (finer) buckets
        return Plan(step, start, [(fine, start - fine.step_s / 2, min(hwm, end))], hwm)
    # Each tier's step rounded up to a whole number of its rows; the coarsest within 25 % of the
    # asked step wins (fewer rows), else the finest (closest to what was asked).
    whole = [math.ceil(step / t.step_s - 1e-9) * t.step_s for t in marks.tiers]
    step = next((w for w in reversed(whole) if w <= step * COARSER_BY + 1e-9), whole[0])
    origin = math.floor(start / step) * step
    usable = [t for t in marks.tiers if t.hwm is not None and _divides(t.step_s, step)]
    segments: list[tuple[Tier, float, float]] = []
    lo = origin
    for tier in sorted(usable, key=lambda t: -t.step_s):
        assert tier.hwm is not None
        hi = min(tier.hwm, end)
        if hi > lo:
            segments.append((tier, lo, hi))
            lo = hi
    return Plan(step, origin, segments, max(lo, hwm))


def _divides(unit: float, step: float) -> bool:
    n = round(step / unit)
    return n >= 1 and abs(n * unit - step) < 1e-6


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
    p = plan(marks, start, end, step)
    for tier, lo, hi in p.segments:
        await _collect_rollups(conn, tier, ids, lo, hi, p, agg, buckets)
    if p.raw_from <= end:
        await _collect_raw(conn, ids, p.raw_from, end, p, agg, buckets)
    out = []
    origin, step = p.origin, p.step
    # Whole seconds on an aligned grid need no rounding (a day chart has tens of thousands of points).
    whole = float(origin).is_integer() and float(step).is_integer()
    for row in series_rows:
        # Only buckets with data are returned; gaps stay gaps (the chart shows no line there).
        items = sorted(buckets[row.id].items())
        pts: list[tuple[float, float | None]] = (
            [(origin + b * step, round(v, 6)) for b, (v, _) in items]
            if whole
            else [(round(origin + b * step, 3), round(v, 6)) for b, (v, _) in items]
        )
        out.append(SeriesOut(metric=row.metric, labels=json.loads(row.labels), points=pts))
    out.sort(key=lambda s: (s.metric, sorted(s.labels.items())))
    coarsest = max((t.step_s for t, _, _ in p.segments), default=None)
    return MetricsOut(
        from_=start,
        to=end,
        step_s=step,
        resolution="rollup" if p.segments else "raw",
        rollup_step_s=max(step, coarsest) if coarsest is not None else None,
        series=out,
    )


async def _collect_raw(conn, ids, lo, hi, p: Plan, agg: Aggregate, buckets: Buckets) -> None:  # type: ignore[no-untyped-def]
    bucket = func.floor((samples.c.ts - p.origin) / p.step)
    value = func.avg(samples.c.value) if agg == "avg" else getattr(func, agg)(samples.c.value)
    stmt = (
        select(samples.c.series_id, bucket, value, func.count(samples.c.value))
        .where(samples.c.series_id.in_(ids), samples.c.ts >= lo, samples.c.ts <= hi)
        .group_by(samples.c.series_id, bucket)
    )
    for sid, b, v, n in await _fetch(conn, stmt):
        if v is not None:
            _add(buckets[sid], int(b), float(v), int(n), agg)


async def _collect_rollups(conn, tier: Tier, ids, lo, hi, p: Plan, agg: Aggregate, buckets: Buckets) -> None:  # type: ignore[no-untyped-def]
    t = tier.table
    where = (t.c.series_id.in_(ids), t.c.ts >= lo, t.c.ts < hi)
    if tier.step_s == p.step:
        # One row per bucket: a plain primary-key range scan, no grouping (no sort).
        column = {"avg": t.c.sum, "max": t.c.max, "min": t.c.min}[agg]
        stmt = select(t.c.series_id, (t.c.ts - p.origin) / p.step, column, t.c.count).where(*where)
    else:
        bucket = func.floor((t.c.ts - p.origin) / p.step)
        # Only the columns the aggregate needs: the grouping sorts every row read.
        value = {"avg": func.sum(t.c.sum), "max": func.max(t.c.max), "min": func.min(t.c.min)}[agg]
        stmt = (
            select(t.c.series_id, bucket, value, func.sum(t.c.count))
            .where(*where)
            .group_by(t.c.series_id, bucket)
        )
    avg = agg == "avg"
    for sid, b, v, n in await _fetch(conn, stmt):
        if not n or v is None:
            continue
        # MariaDB sums integers as DECIMAL: floats from here on.
        n, v = int(n), float(v)
        # round(): the plain scan's bucket is an exact multiple up to float error.
        b = max(round(b), 0)
        series_buckets = buckets[sid]
        if b in series_buckets:
            _add(series_buckets, b, v / n if avg else v, n, agg)
        else:  # the common case, inline: a day page has tens of thousands of rows
            series_buckets[b] = (v / n if avg else v, n)


async def _fetch(conn: AsyncConnection, stmt: Select[Any]) -> Sequence[Sequence[Any]]:
    """All rows as plain tuples. On SQLite and PostgreSQL straight from the driver: SQLAlchemy's
    per-row result processing cost more than the query on a day-long page (docs/STORE-PERF.md)."""
    dialect = conn.dialect
    if dialect.name not in ("sqlite", "postgresql"):
        return (await conn.execute(stmt)).all()
    compiled = stmt.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    params = [compiled.params[name] for name in compiled.positiontup or ()]
    driver: Any = (await conn.get_raw_connection()).driver_connection
    if dialect.name == "sqlite":
        cursor = await driver.execute(str(compiled), params)
        try:
            return list(await cursor.fetchall())
        finally:
            await cursor.close()
    return list(await driver.fetch(str(compiled), *params))


def _add(series_buckets: dict[int, tuple[float, int]], b: int, v: float, n: int, agg: Aggregate) -> None:
    """Put a value in its bucket, merging with one from another tier already there."""
    have = series_buckets.get(b)
    if have is None:
        series_buckets[b] = (v, n)
        return
    hv, hn = have
    if agg == "max":
        series_buckets[b] = (max(v, hv), n + hn)
    elif agg == "min":
        series_buckets[b] = (min(v, hv), n + hn)
    else:
        series_buckets[b] = ((v * n + hv * hn) / (n + hn), n + hn)
