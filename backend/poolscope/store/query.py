"""Reading charts: every series of a request in one query per storage tier, bucketed in SQL.

A range is answered from the coarsest tier that fits the chart's step: coarse rollups before
their high-water mark, 1-step rollups up to theirs, raw samples after it (the newest minutes of
a day-long chart are never missing). Each tier is read by a (series_id, ts) primary-key range.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from math import floor
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Integer,
    Select,
    Table,
    bindparam,
    func,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import TypeEngine

from poolscope.metrics import Aggregation
from poolscope.schemas import MetricsOut, SeriesOut
from poolscope.store.head import readable_samples, uses_head
from poolscope.store.latest import target_latest
from poolscope.store.tables import samples, samples_head, series

Build = Callable[[BindParameter[Any]], Select[Any] | CompoundSelect[Any]]
ITEMS = "items"
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
    # Raw samples before this ts may have been deleted by retention (store/rollup.py RAW_CUT_KEY);
    # None: not known, the oldest raw sample may mark such a cut.
    raw_cut: float | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    step: float  # bucket width
    origin: float  # bucket 0 starts here
    segments: list[tuple[Tier, float, float]]  # rollups to read [lo, hi), coarsest first
    raw_from: float


@dataclass(frozen=True, slots=True)
class RawRead:
    """What SqlStore.raw_history_to_latest read."""

    latest: float | None  # the ts of the target's latest row; None without one
    series: list[tuple[int, str, str]] | None  # (id, metric, labels JSON), when asked for
    rows: Sequence[Sequence[Any]]  # (series id, ts, value) by series then time
    count: int | None  # samples in the range asked to count


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
    # A range that starts before the store's first sample, where retention never cut, has all of
    # its raw samples: it reads them (a young store's live chart, the recommender's first window),
    # not rollups of them.
    cut = marks.raw_cut
    if cut is not None and oldest is not None:
        # A sample below the cut is there only after a clock went back (a cut in the future).
        cut = min(cut, oldest)
    raw_gone = start < cut if cut is not None else (oldest is None or start < oldest)
    if hwm is None or start >= hwm or not (step >= fine.step_s or raw_gone):
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
    agg: Aggregation,
) -> MetricsOut:
    metrics = list(dict.fromkeys(metrics))
    series_rows = await fetch_all(conn, _series_statement, {"target": target}, metrics, series.c.metric.type)
    if not series_rows:
        return MetricsOut.model_construct(
            from_=float(start),
            to=float(end),
            step_s=float(step),
            resolution="raw",
            rollup_step_s=None,
            series=[],
        )
    ids = [r[0] for r in series_rows]
    buckets: Buckets = {i: {} for i in ids}
    p = plan(marks, start, end, step)
    for tier, lo, hi in p.segments:
        await _collect_rollups(conn, tier, ids, lo, hi, p, agg, buckets)
    if p.raw_from <= end:
        await _collect_raw(conn, ids, p.raw_from, end, p, agg, buckets)
    out = []
    origin, step = float(p.origin), float(p.step)
    # Whole seconds on an aligned grid need no rounding (a day chart has tens of thousands of points).
    whole = origin.is_integer() and step.is_integer()
    # Gauges repeat their bucket values (queue lengths, thread counts): each is rounded once.
    # Zeros stay as they are (round keeps -0.0, which as a key would equal 0.0).
    rounded = Rounded()
    for sid, metric, labels in series_rows:
        # Only buckets with data are returned; gaps stay gaps (the chart shows no line there).
        items = sorted(buckets[sid].items())
        pts: list[tuple[float, float | None]] = (
            [(origin + b * step, rounded[v] if v else v) for b, (v, _) in items]
            if whole
            else [(round(origin + b * step, 3), rounded[v] if v else v) for b, (v, _) in items]
        )
        # Built, not validated: every value above is already a float (a page has ~20k points).
        out.append(SeriesOut.model_construct(metric=metric, labels=json.loads(labels), points=pts))
    out.sort(key=lambda s: (s.metric, sorted(s.labels.items())))
    coarsest = max((t.step_s for t, _, _ in p.segments), default=None)
    return MetricsOut.model_construct(
        from_=float(start),
        to=float(end),
        step_s=step,
        resolution="rollup" if p.segments else "raw",
        rollup_step_s=max(step, coarsest) if coarsest is not None else None,
        series=out,
    )


async def totals(
    conn: AsyncConnection,
    marks: StoreMarks,
    target: str,
    metrics: Sequence[str],
    start: float,
    end: float,
    agg: Aggregation,
) -> list[tuple[str, dict[str, str], float, int]]:
    """Each series of the metrics over the range as one figure: (metric, labels, sum or max, samples).

    The same tiers as a chart, read as one bucket (a range's rollups are taken whole, so a range
    that starts inside a rollup step may count up to one step before it)."""
    series_rows = await fetch_all(
        conn, _series_statement, {"target": target}, list(metrics), series.c.metric.type
    )
    if not series_rows:
        return []
    ids = [r[0] for r in series_rows]
    buckets: Buckets = {i: {} for i in ids}
    p = plan(marks, start, end, max(end - start, 1.0))
    for tier, lo, hi in p.segments:
        await _collect_rollups(conn, tier, ids, lo, hi, p, agg, buckets)
    if p.raw_from <= end:
        await _collect_raw(conn, ids, p.raw_from, end, p, agg, buckets)
    out = []
    for sid, metric, labels in series_rows:
        parts = buckets[sid].values()
        if not parts:
            continue
        n = sum(count for _, count in parts)
        value = max(v for v, _ in parts) if agg == "max" else sum(v * count for v, count in parts)
        out.append((metric, json.loads(labels), value, n))
    return out


def raw_only(marks: StoreMarks, start: float, end: float, step: float) -> bool:
    """Whether query() answers [start, end] at `step` from raw samples alone, bucketed from `start`
    (not from rollups: the range is at a finer step than a rollup's and its raw data is there)."""
    p = plan(marks, start, end, step)
    return not p.segments and p.origin == start and p.raw_from == start


async def target_series(
    conn: AsyncConnection, target: str, metrics: Sequence[str]
) -> list[tuple[int, str, str]]:
    """The target's series of these metrics: (id, metric, labels JSON)."""
    rows = await _fetch_by_metrics(conn, _series_statement, {"target": target}, metrics)
    return [(int(i), m, labels) for i, m, labels in rows]


async def _fetch_by_metrics(
    conn: AsyncConnection,
    build: Build,
    values: dict[str, Any],
    metrics: Sequence[str],
) -> Sequence[Sequence[Any]]:
    """The rows of a statement over the target's series of these metrics (the list parameter)."""
    return await fetch_all(conn, build, values, list(dict.fromkeys(metrics)), series.c.metric.type)


async def raw_samples_to_latest(
    conn: AsyncConnection, target: str, metrics: Sequence[str], lo: float, hi: float
) -> tuple[float | None, Sequence[Sequence[Any]]]:
    """The ts of the target's latest row (store/latest.py; None without one) and the raw samples
    of its series of these metrics with lo <= ts <= hi, as (series id, ts, value) by series then
    time: one statement, so both are read at one point in the commit order."""
    values = {"target": target, "target2": target, "lo": lo, "hi": hi}
    rows = await _fetch_by_metrics(conn, partial(_to_latest_statement, conn.dialect), values, metrics)
    if rows and rows[0][0] == -1:
        return float(rows[0][1]), rows[1:]
    return None, rows


async def count_samples(
    conn: AsyncConnection, target: str, metrics: Sequence[str], lo: float, hi: float
) -> int:
    """How many raw samples (NULL values too) the target's series of these metrics have with lo <= ts <= hi."""
    values = {"target": target, "lo": lo, "hi": hi}
    rows = await _fetch_by_metrics(conn, partial(_count_statement, conn.dialect), values, metrics)
    return sum(int(row[0]) for row in rows)


def _count_statement(dialect: Dialect, names: BindParameter[Any]) -> Select[Any] | CompoundSelect:
    # A count per table (added up by the caller): SQLite pushes no term with a subquery into a
    # UNION ALL under an aggregate, so counting readable_samples() scanned every sample.
    tables = (samples, samples_head) if uses_head(dialect.name) else (samples,)
    counts = [
        select(func.count()).where(
            t.c.series_id.in_(_series_ids(names)), t.c.ts >= param("lo"), t.c.ts <= param("hi")
        )
        for t in tables
    ]
    return union_all(*counts) if len(counts) > 1 else counts[0]


def _of_target(names: BindParameter[Any], target: str = "target") -> tuple[ColumnElement[bool], ...]:
    """The target's series of these metrics (the list parameter)."""
    return series.c.target == param(target, ""), series.c.metric.in_(names)


def _series_ids(names: BindParameter[Any], target: str = "target") -> Select[Any]:
    """The ids of the target's series of these metrics, as a subquery: their samples are then read
    by the primary key in its order (a join reads them in the series index's order, then sorts)."""
    return select(series.c.id).where(*_of_target(names, target))


def _to_latest_statement(dialect: Dialect, names: BindParameter[Any]) -> CompoundSelect:
    src = readable_samples(dialect)
    latest = target_latest.c.ts
    mark = select(literal_column("-1").label("series_id"), latest.label("ts"), null().label("value")).where(
        target_latest.c.target == param("target", "")
    )
    found = select(src.c.series_id, src.c.ts, src.c.value).where(
        src.c.series_id.in_(_series_ids(names, "target2")),
        src.c.ts >= param("lo"),
        src.c.ts <= param("hi"),
    )
    # The latest row's ts first (series id -1), then the samples by series and time.
    return union_all(mark, found).order_by(literal_column("1"), literal_column("2"))


def _series_statement(names: BindParameter[Any]) -> Select[Any]:
    return select(series.c.id, series.c.metric, series.c.labels).where(*_of_target(names))


def param(name: str, example: float | str = 0.0) -> BindParameter[Any]:
    """A named value of a statement; the example gives its type."""
    return bindparam(name, value=example)


async def fetch_all(
    conn: AsyncConnection,
    build: Build,
    values: dict[str, Any],
    items: Sequence[Any],
    item_type: TypeEngine[Any] | None = None,
) -> Sequence[Sequence[Any]]:
    """The rows of `build(list parameter)` with these values and list items (integers unless
    `item_type` says otherwise)."""
    stmt = build(bindparam(ITEMS, expanding=True, type_=item_type or Integer()))
    return (await conn.execute(stmt, {**values, ITEMS: list(items)})).all()


def _bucket(ts: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.floor((ts - param("origin")) / param("step"))


async def _collect_raw(conn, ids, lo, hi, p: Plan, agg: Aggregation, buckets: Buckets) -> None:  # type: ignore[no-untyped-def]
    def build(id_list: BindParameter[Any]) -> Select[Any]:
        src = readable_samples(conn.dialect)
        value = func.avg(src.c.value) if agg == "avg" else getattr(func, agg)(src.c.value)
        bucket = _bucket(src.c.ts)
        return (
            select(src.c.series_id, bucket, value, func.count(src.c.value))
            .where(src.c.series_id.in_(id_list), src.c.ts >= param("lo"), src.c.ts <= param("hi"))
            .group_by(src.c.series_id, bucket)
        )

    values = {"origin": p.origin, "step": p.step, "lo": lo, "hi": hi}
    for sid, b, v, n in await fetch_all(conn, build, values, ids):
        if v is not None:
            _add(buckets[sid], int(b), float(v), int(n), agg)


async def _collect_rollups(
    conn, tier: Tier, ids, lo, hi, p: Plan, agg: Aggregation, buckets: Buckets
) -> None:  # type: ignore[no-untyped-def]
    t = tier.table
    plain = tier.step_s == p.step

    def build(id_list: BindParameter[Any]) -> Select[Any]:
        where = (t.c.series_id.in_(id_list), t.c.ts >= param("lo"), t.c.ts < param("hi"))
        if plain:
            # One row per bucket: a plain primary-key range scan, no grouping (no sort).
            column = {"avg": t.c.sum, "max": t.c.max, "min": t.c.min}[agg]
            position = (t.c.ts - param("origin")) / param("step")
            return select(t.c.series_id, position, column, t.c.count).where(*where)
        bucket = _bucket(t.c.ts)
        # Only the columns the aggregate needs: the grouping sorts every row read.
        value = {"avg": func.sum(t.c.sum), "max": func.max(t.c.max), "min": func.min(t.c.min)}[agg]
        return (
            select(t.c.series_id, bucket, value, func.sum(t.c.count))
            .where(*where)
            .group_by(t.c.series_id, bucket)
        )

    values = {"origin": p.origin, "step": p.step, "lo": lo, "hi": hi}
    avg = agg == "avg"
    for sid, b, v, n in await fetch_all(conn, build, values, ids):
        if not n or v is None:
            continue
        # MariaDB sums integers as DECIMAL: floats from here on.
        n, v = int(n), float(v)
        # The plain scan's bucket is a whole number up to float error; the nearest one, clamped at
        # bucket 0 (rows just before the origin when raw data is gone). int(b + 0.5), not round():
        # round() of a float was 14 % of a day page's CPU.
        b = int(b + 0.5)
        if b < 0:
            b = 0
        series_buckets = buckets[sid]
        if b in series_buckets:
            _add(series_buckets, b, v / n if avg else v, n, agg)
        else:  # the common case, inline: a day page has tens of thousands of rows
            series_buckets[b] = (v / n if avg else v, n)


class Rounded(dict[float, float]):
    """round6 of each value, memoised: a hit is one dict lookup in C."""

    def __missing__(self, x: float) -> float:
        r = self[x] = round6(x)
        return r


def round6(x: float) -> float:
    """round(x, 6), exactly, in about half its time (a day page rounds ~20k values).

    x * 1e6 is off the exact product by at most half an ulp, so unless it lies within a few ulps
    of a rounding tie the nearest integer is the same as for the exact product; that integer
    divided by 1e6 (both exact) is the double nearest to the decimal, which is what round()
    returns. Near a tie, for zero (the sign of -0.0) and for huge values round() decides.
    """
    y = x * 1e6
    if -4e15 < y < 4e15:
        n = floor(y)
        f = y - n - 0.5
        guard = (y if y > 0 else -y) * 4.5e-16 + 1e-300
        if f > guard:
            n += 1
        elif f >= -guard:
            return round(x, 6)
        if n:
            return n / 1e6
    return round(x, 6)


def _add(series_buckets: dict[int, tuple[float, int]], b: int, v: float, n: int, agg: Aggregation) -> None:
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
