"""Maintenance: roll completed steps up (raw -> rollups -> coarse rollups), then drop rows past
their retention. Keeps the store's tier marks (store/query.py StoreMarks) current in-process."""

from __future__ import annotations

import math
from dataclasses import replace

from sqlalchemy import Table, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.store.query import StoreMarks, Tier
from poolscope.store.tables import rollups, rollups_x3, rollups_x10, samples, store_meta

ROLLUP_HWM_KEY = "rollup_high_water_mark"
# (table, rollup steps per row): each coarser tier is rolled up from `rollups`.
TIER_FACTORS: tuple[tuple[Table, int], ...] = ((rollups, 1), (rollups_x3, 3), (rollups_x10, 10))
# Deletes run in bounded batches so retention never holds the write lock for long.
MAX_DELETE_BATCHES = 100


def _hwm_key(factor: int) -> str:
    return ROLLUP_HWM_KEY if factor == 1 else f"rollup_x{factor}_high_water_mark"


async def read_marks(conn: AsyncConnection, step_s: float) -> StoreMarks:
    keys = [_hwm_key(f) for _, f in TIER_FACTORS]
    wanted = select(store_meta.c.key, store_meta.c.value).where(store_meta.c.key.in_(keys))
    meta = {key: value for key, value in await conn.execute(wanted)}
    oldest = (await conn.execute(select(func.min(samples.c.ts)))).scalar()
    return StoreMarks(
        tiers=tuple(Tier(t, float(step_s * f), _float(meta.get(_hwm_key(f)))) for t, f in TIER_FACTORS),
        oldest_raw=float(oldest) if oldest is not None else None,
    )


async def maintain(
    engine: AsyncEngine, marks: StoreMarks, now: float, raw_retention_s: float, rollup_retention_s: float
) -> tuple[StoreMarks, dict[str, int]]:
    counts = {
        "rolled_up": 0,
        "rolled_up_coarse": 0,
        "raw_deleted": 0,
        "rollups_deleted": 0,
        "coarse_deleted": 0,
    }
    fine, *coarser = marks.tiers
    async with engine.begin() as conn:
        hwm, counts["rolled_up"] = await _roll_up(conn, samples, fine, now, _raw_columns())
        tiers = [replace(fine, hwm=hwm)]
        for tier in coarser:
            # Only completed fine rows: a coarse row is never written from a partial minute.
            tier_hwm, rolled = await _roll_up(conn, rollups, tier, min(now, hwm), _rollup_columns())
            counts["rolled_up_coarse"] += rolled
            tiers.append(replace(tier, hwm=tier_hwm))
        for tier, (_, factor) in zip(tiers, TIER_FACTORS, strict=True):
            await _write_meta(conn, _hwm_key(factor), repr(tier.hwm))
    counts["raw_deleted"] = await _delete_before(engine, samples, min(now - raw_retention_s, hwm))
    rolled_on = min(t.hwm for t in tiers[1:] if t.hwm is not None)
    counts["rollups_deleted"] = await _delete_before(
        engine, rollups, min(now - rollup_retention_s, rolled_on)
    )
    for tier in tiers[1:]:
        counts["coarse_deleted"] += await _delete_before(engine, tier.table, now - rollup_retention_s)
    async with engine.connect() as conn:
        oldest = (await conn.execute(select(func.min(samples.c.ts)))).scalar()
    return StoreMarks(tuple(tiers), float(oldest) if oldest is not None else None), counts


def _raw_columns():  # type: ignore[no-untyped-def]
    v = samples.c.value
    return [func.count(v), func.sum(v), func.min(v), func.max(v)]


def _rollup_columns():  # type: ignore[no-untyped-def]
    r = rollups.c
    return [func.sum(r.count), func.sum(r.sum), func.min(r.min), func.max(r.max)]


async def _roll_up(conn, source: Table, tier: Tier, now: float, columns) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Aggregate the source's completed tier steps into the tier; returns the new high-water mark."""
    step = tier.step_s
    done_until = math.floor(now / step) * step  # the current step is still filling
    hwm = tier.hwm
    if hwm is None:
        first = (await conn.execute(select(func.min(source.c.ts)))).scalar()
        hwm = math.floor(first / step) * step if first is not None else done_until
    if done_until <= hwm:
        return hwm, 0
    bucket = (func.floor(source.c.ts / step) * step).label("bucket")
    rolled = (
        select(source.c.series_id, bucket, *columns)
        .where(source.c.ts >= hwm, source.c.ts < done_until)
        .group_by(source.c.series_id, bucket)
    )
    result = await conn.execute(
        insert(tier.table).from_select(["series_id", "ts", "count", "sum", "min", "max"], rolled)
    )
    return done_until, max(result.rowcount or 0, 0)


async def _delete_before(engine: AsyncEngine, table: Table, cutoff: float) -> int:
    total = 0
    for _ in range(MAX_DELETE_BATCHES):
        async with engine.begin() as conn:
            oldest = (await conn.execute(select(func.min(table.c.ts)))).scalar()
            if oldest is None or oldest >= cutoff:
                break
            # Delete by time slices rather than LIMIT, which not every dialect allows in DELETE.
            slice_end = min(cutoff, oldest + max(600.0, (cutoff - oldest) / 10))
            result = await conn.execute(delete(table).where(table.c.ts < slice_end))
            total += max(result.rowcount or 0, 0)
    return total


async def _write_meta(conn: AsyncConnection, key: str, value: str) -> None:
    result = await conn.execute(update(store_meta).where(store_meta.c.key == key).values(value=value))
    if result.rowcount == 0:
        await conn.execute(insert(store_meta).values(key=key, value=value))


def _float(value: str | None) -> float | None:
    return float(value) if value is not None else None
