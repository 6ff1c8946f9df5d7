"""The time-series store on any async SQLAlchemy database (SQLite by default).

Raw samples are kept for hours; completed rollup steps (count/sum/min/max) for days. A query
reads rollups where they exist and raw samples after them, so the newest minutes of a day-long
chart are never missing.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable, Sequence
from typing import Literal

from sqlalchemy import and_, delete, event, func, insert, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from poolscope.schemas import MetricsOut, PollEvent, Sample, SeriesOut, TargetInfo, TargetState
from poolscope.store.latest import LatestRows
from poolscope.store.live import LiveHub
from poolscope.store.tables import rollups, samples, series, store_meta

log = logging.getLogger(__name__)

Aggregate = Literal["avg", "max", "min"]
ROLLUP_HWM_KEY = "rollup_high_water_mark"
# Deletes run in bounded batches so retention never holds the write lock for long.
DELETE_BATCH_ROWS = 50_000
MAX_DELETE_BATCHES = 100


def canonical_labels(labels: dict[str, str]) -> str:
    return json.dumps(labels, sort_keys=True, separators=(",", ":"))


def _sqlite_tuning(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    # WAL: readers (API) never block the writer (poller); a killed process loses nothing committed.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


class SqlStore:
    def __init__(
        self,
        url: str,
        *,
        raw_retention_s: float,
        rollup_retention_s: float,
        rollup_step_s: int = 60,
        engine: AsyncEngine | None = None,
    ) -> None:
        self.url = url
        self.raw_retention_s = raw_retention_s
        self.rollup_retention_s = rollup_retention_s
        self.rollup_step_s = rollup_step_s
        self.engine = engine or create_async_engine(url)
        if make_url(url).get_backend_name() == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_tuning)
        self.hub = LiveHub()
        self._series_ids: dict[tuple[str, str, str], int] = {}
        # Each target's latest poll, readable by every process (store/latest.py).
        self.latest_rows = LatestRows(self.engine)
        self._rollup_hwm: float | None = None

    async def close(self) -> None:
        await self.engine.dispose()

    # --- writing -------------------------------------------------------------------------

    async def write_poll(
        self, info: TargetInfo, state: TargetState | None, poll_samples: Sequence[Sample], ts: float
    ) -> None:
        """Store one poll's samples and the target's latest row, then tell live subscribers."""
        async with self.engine.begin() as conn:
            rows = []
            for item in poll_samples:
                series_id = await self._series_id(conn, info.name, item.metric, item.labels)
                rows.append({"series_id": series_id, "ts": ts, "value": _finite(item.value)})
            if rows:
                await conn.execute(insert(samples), rows)
            await self.latest_rows.write(conn, info, state, poll_samples, ts)
        self.hub.publish(
            PollEvent(target=info.name, ts=ts, target_info=info, state=state, samples=list(poll_samples))
        )

    async def _series_id(self, conn, target: str, metric: str, labels: dict[str, str]) -> int:  # type: ignore[no-untyped-def]
        key = (target, metric, canonical_labels(labels))
        cached = self._series_ids.get(key)
        if cached is not None:
            return cached
        where = and_(series.c.target == key[0], series.c.metric == key[1], series.c.labels == key[2])
        found = (await conn.execute(select(series.c.id).where(where))).scalar()
        if found is None:
            result = await conn.execute(insert(series).values(target=key[0], metric=key[1], labels=key[2]))
            found = result.inserted_primary_key[0]
        self._series_ids[key] = int(found)
        return int(found)

    # --- reading -------------------------------------------------------------------------

    async def latest_samples(self, target: str) -> list[Sample]:
        """The samples of the target's last poll (a down poll's are only target_up), or none."""
        latest = await self.latest_rows.get(target)
        return latest.samples if latest else []

    async def latest(self, target: str) -> tuple[TargetInfo, TargetState | None] | None:
        latest = await self.latest_rows.get(target)
        return (latest.info, latest.state) if latest else None

    async def query(
        self,
        target: str,
        metrics: Iterable[str],
        start: float,
        end: float,
        points: int,
        agg: Aggregate = "avg",
        min_step_s: float = 1.0,
    ) -> MetricsOut:
        """Series for the range, at most `points` buckets each (the chart's width)."""
        step = max(min_step_s, (end - start) / max(points, 1))
        async with self.engine.connect() as conn:
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
            hwm = await self._read_hwm(conn)
            use_rollups = False
            if hwm is not None and start < hwm:
                # Rollups answer the part before the high-water mark when the chart is coarser
                # than a rollup step anyway (faster, same average), or when raw data is gone.
                oldest_raw = (await conn.execute(select(func.min(samples.c.ts)))).scalar()
                use_rollups = step >= self.rollup_step_s or oldest_raw is None or start < oldest_raw
            buckets: dict[int, dict[int, list[tuple[float, int]]]] = {i: {} for i in ids}
            raw_from = start
            if use_rollups and hwm is not None and hwm > start:
                raw_from = hwm
                await self._collect_rollups(conn, ids, start, min(hwm, end), start, step, agg, buckets)
            if raw_from <= end:
                await self._collect_raw(conn, ids, raw_from, end, start, step, agg, buckets)
        out = []
        for row in series_rows:
            by_bucket = buckets[row.id]
            # Only buckets with data are returned; gaps stay gaps (the chart shows no line there).
            pts: list[tuple[float, float | None]] = [
                (round(start + b * step, 3), _combine(v, agg)) for b, v in sorted(by_bucket.items())
            ]
            out.append(SeriesOut(metric=row.metric, labels=json.loads(row.labels), points=pts))
        out.sort(key=lambda s: (s.metric, sorted(s.labels.items())))
        return MetricsOut(
            from_=start,
            to=end,
            step_s=step,
            resolution="rollup" if use_rollups else "raw",
            rollup_step_s=max(step, float(self.rollup_step_s)) if use_rollups else None,
            series=out,
        )

    async def _collect_raw(self, conn, ids, lo, hi, origin, step, agg, buckets) -> None:  # type: ignore[no-untyped-def]
        bucket = func.floor((samples.c.ts - origin) / step).label("bucket")
        value = func.avg(samples.c.value) if agg == "avg" else getattr(func, agg)(samples.c.value)
        stmt = (
            select(samples.c.series_id, bucket, value.label("v"), func.count(samples.c.value).label("n"))
            .where(samples.c.series_id.in_(ids), samples.c.ts >= lo, samples.c.ts <= hi)
            .group_by(samples.c.series_id, bucket)
        )
        for row in await conn.execute(stmt):
            if row.v is not None:
                buckets[row.series_id].setdefault(int(row.bucket), []).append((float(row.v), int(row.n)))

    async def _collect_rollups(self, conn, ids, lo, hi, origin, step, agg, buckets) -> None:  # type: ignore[no-untyped-def]
        bucket = func.floor((rollups.c.ts - origin) / step).label("bucket")
        stmt = (
            select(
                rollups.c.series_id,
                bucket,
                func.sum(rollups.c.sum).label("s"),
                func.sum(rollups.c.count).label("n"),
                func.max(rollups.c.max).label("mx"),
                func.min(rollups.c.min).label("mn"),
            )
            .where(
                rollups.c.series_id.in_(ids), rollups.c.ts >= lo - self.rollup_step_s / 2, rollups.c.ts < hi
            )
            .group_by(rollups.c.series_id, bucket)
        )
        for row in await conn.execute(stmt):
            n = int(row.n or 0)
            if n == 0:
                continue
            value = {"avg": (row.s or 0.0) / n, "max": row.mx, "min": row.mn}[agg]
            buckets[row.series_id].setdefault(max(int(row.bucket), 0), []).append((float(value), n))

    # --- maintenance ---------------------------------------------------------------------

    async def _read_hwm(self, conn) -> float | None:  # type: ignore[no-untyped-def]
        if self._rollup_hwm is None:
            value = (
                await conn.execute(select(store_meta.c.value).where(store_meta.c.key == ROLLUP_HWM_KEY))
            ).scalar()
            self._rollup_hwm = float(value) if value is not None else None
        return self._rollup_hwm

    async def maintain(self, now: float | None = None) -> dict[str, int]:
        """Roll up completed steps, then drop raw samples and rollups past their retention."""
        now = time.time() if now is None else now
        step = self.rollup_step_s
        done_until = math.floor(now / step) * step  # the current step is still filling
        counts = {"rolled_up": 0, "raw_deleted": 0, "rollups_deleted": 0}
        async with self.engine.begin() as conn:
            hwm = await self._read_hwm(conn)
            if hwm is None:
                first = (await conn.execute(select(func.min(samples.c.ts)))).scalar()
                hwm = math.floor(first / step) * step if first is not None else done_until
            if done_until > hwm:
                bucket = (func.floor(samples.c.ts / step) * step).label("bucket")
                rolled = (
                    select(
                        samples.c.series_id,
                        bucket,
                        func.count(samples.c.value),
                        func.sum(samples.c.value),
                        func.min(samples.c.value),
                        func.max(samples.c.value),
                    )
                    .where(samples.c.ts >= hwm, samples.c.ts < done_until)
                    .group_by(samples.c.series_id, bucket)
                )
                result = await conn.execute(
                    insert(rollups).from_select(["series_id", "ts", "count", "sum", "min", "max"], rolled)
                )
                counts["rolled_up"] = max(result.rowcount or 0, 0)
                hwm = done_until
            await self._write_meta(conn, ROLLUP_HWM_KEY, repr(hwm))
        self._rollup_hwm = hwm
        counts["raw_deleted"] = await self._delete_before(samples, min(now - self.raw_retention_s, hwm))
        counts["rollups_deleted"] = await self._delete_before(rollups, now - self.rollup_retention_s)
        return counts

    async def _delete_before(self, table, cutoff: float) -> int:  # type: ignore[no-untyped-def]
        total = 0
        for _ in range(MAX_DELETE_BATCHES):
            async with self.engine.begin() as conn:
                oldest = (await conn.execute(select(func.min(table.c.ts)))).scalar()
                if oldest is None or oldest >= cutoff:
                    break
                # Delete by time slices rather than LIMIT, which not every dialect allows in DELETE.
                slice_end = min(cutoff, oldest + max(600.0, (cutoff - oldest) / 10))
                result = await conn.execute(delete(table).where(table.c.ts < slice_end))
                total += max(result.rowcount or 0, 0)
        return total

    async def _write_meta(self, conn, key: str, value: str) -> None:  # type: ignore[no-untyped-def]
        result = await conn.execute(update(store_meta).where(store_meta.c.key == key).values(value=value))
        if result.rowcount == 0:
            await conn.execute(insert(store_meta).values(key=key, value=value))


def _finite(value: float | None) -> float | None:
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    return float(value)


def _combine(parts: list[tuple[float, int]], agg: Aggregate) -> float:
    """Merge a bucket that got values from both rollups and raw samples."""
    if len(parts) == 1:
        return round(parts[0][0], 6)
    if agg == "max":
        return round(max(v for v, _ in parts), 6)
    if agg == "min":
        return round(min(v for v, _ in parts), 6)
    total = sum(n for _, n in parts)
    return round(sum(v * n for v, n in parts) / total, 6) if total else 0.0
