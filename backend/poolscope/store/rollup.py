"""Maintenance: roll completed steps up (raw -> rollups -> coarse rollups), then drop rows past
their retention. Keeps the store's tier marks (store/query.py StoreMarks) current in-process.

On SQLite and PostgreSQL the samples table has no index on ts alone (migration 0010: it was a
quarter of PostgreSQL's server work per inserted sample), so every read of it by time names every
series (`_each_series`): one range of the primary key (series_id, ts) per series. Its oldest
timestamp is one probe per series (`_oldest`); maintain() keeps it in store_meta, so chart
readers (read_marks) do not pay for it. MariaDB keeps the index and reads by time alone.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from sqlalchemy import (
    ColumnElement,
    Dialect,
    Double,
    Table,
    any_,
    delete,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.store.head import HEAD_DIALECTS, move_head_or_hold, uses_head
from poolscope.store.query import StoreMarks, Tier
from poolscope.store.tables import rollups, rollups_x3, rollups_x10, samples, samples_head, series, store_meta

ROLLUP_HWM_KEY = "rollup_high_water_mark"
# The oldest raw sample's ts after the last maintain() (absent: no samples then).
RAW_OLDEST_KEY = "raw_oldest"
# Raw samples before this ts may have been deleted: the retention's cut, the greatest applied,
# stored before its deletes (absent: not known yet, as in a store maintained by an older version).
# Charts plan from it (store/query.py plan): before the first cut every raw sample is there.
RAW_CUT_KEY = "raw_cut"
# Where the running retention pass started deleting samples (absent: none running). The oldest
# mark moves to the cutoff before the rows go, so after a pass that died part-way only this says
# where leftovers may start: the next pass slices from here rather than deleting them all at once.
RAW_PURGE_KEY = "raw_purge_from"
# Engines whose samples table keeps ix_samples_ts (migration 0010) and whose reads by time use it:
# the per-series reads were planned and measured on SQLite and PostgreSQL only.
TS_INDEXED = frozenset({"mysql", "mariadb"})
# (table, rollup steps per row): each coarser tier is rolled up from `rollups`.
TIER_FACTORS: tuple[tuple[Table, int], ...] = ((rollups, 1), (rollups_x3, 3), (rollups_x10, 10))
# Tier steps rolled up per statement, and at most this many statements per tier and pass (a
# far-off first sample, e.g. a wrong clock, widens the slices rather than multiplying them).
ROLLUP_SLICE_STEPS = 10
MAX_ROLLUP_SLICES = 1000
# Deletes run in bounded batches so retention never holds the write lock for long.
MAX_DELETE_BATCHES = 100


def _hwm_key(factor: int) -> str:
    return ROLLUP_HWM_KEY if factor == 1 else f"rollup_x{factor}_high_water_mark"


async def read_marks(conn: AsyncConnection, step_s: float) -> StoreMarks:
    keys = [_hwm_key(f) for _, f in TIER_FACTORS] + [RAW_CUT_KEY]
    indexed = conn.dialect.name in TS_INDEXED
    if not indexed:
        keys.append(RAW_OLDEST_KEY)
    wanted = select(store_meta.c.key, store_meta.c.value).where(store_meta.c.key.in_(keys))
    meta = {key: value for key, value in await conn.execute(wanted)}
    # Samples are deleted only by maintain(), which stores their oldest ts after it; until a
    # maintain() has seen samples, ask the table.
    oldest = _float(meta.get(RAW_OLDEST_KEY)) if not indexed else None
    if oldest is None:
        oldest = await _oldest(conn, samples)
    return StoreMarks(
        tiers=tuple(Tier(t, float(step_s * f), _float(meta.get(_hwm_key(f)))) for t, f in TIER_FACTORS),
        oldest_raw=oldest,
        raw_cut=_float(meta.get(RAW_CUT_KEY)),
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
        rolled_until = now
        if uses_head(conn.dialect.name):
            # SQLite: the head goes into samples first, in this transaction (its write lock is
            # held from here on), so the roll-up below reads samples alone (store/head.py). All
            # series: what came since SqlStore's sliced move. If the move fails, the roll-up stops
            # before the head's oldest row and retention (cut at the roll-up's mark) keeps it.
            held = await move_head_or_hold(conn, time.time())
            if held is not None:
                rolled_until = min(now, held)
        hwm, counts["rolled_up"] = await _roll_up(conn, samples, fine, rolled_until, _raw_columns())
        tiers = [replace(fine, hwm=hwm)]
        for tier in coarser:
            # Only completed fine rows: a coarse row is never written from a partial minute.
            tier_hwm, rolled = await _roll_up(conn, rollups, tier, min(now, hwm), _rollup_columns())
            counts["rolled_up_coarse"] += rolled
            tiers.append(replace(tier, hwm=tier_hwm))
        for tier, (_, factor) in zip(tiers, TIER_FACTORS, strict=True):
            await _write_meta(conn, _hwm_key(factor), repr(tier.hwm))
        raw_cutoff = min(now - raw_retention_s, hwm)
        # The stored cut, not this process's copy: another process's pass may have cut further.
        cut_before = await _read_meta(conn, RAW_CUT_KEY)
        raw_cut = max(raw_cutoff, cut_before if cut_before is not None else _cut_not_stored(marks))
        if raw_cut != cut_before:
            await _write_meta(conn, RAW_CUT_KEY, repr(raw_cut))
        if engine.dialect.name not in TS_INDEXED and marks.oldest_raw is not None:
            # Stored even when no pass deleted samples yet, so read_marks need not probe for it.
            await _write_meta(conn, RAW_OLDEST_KEY, repr(marks.oldest_raw))
    # Retention starts at the stored mark (no probe of every series): its DELETEs have no lower
    # bound, so rows older than the mark still go.
    start = marks.oldest_raw if engine.dialect.name not in TS_INDEXED else None
    if start is not None and start < raw_cutoff:
        # Charts plan raw reads from this mark: it moves before the rows go (the deletes commit
        # slice by slice), then to the exact oldest below.
        async with engine.begin() as conn:
            unfinished = await _read_meta(conn, RAW_PURGE_KEY)
            if unfinished is not None:
                start = min(start, unfinished)
            await _write_meta(conn, RAW_PURGE_KEY, repr(start))
            await _write_meta(conn, RAW_OLDEST_KEY, repr(raw_cutoff))
    counts["raw_deleted"] = await _delete_before(engine, samples, raw_cutoff, start)
    if engine.dialect.name in HEAD_DIALECTS:
        # Rows polled since the move above are newer than the cutoff but for a clock set back, or
        # rows left by another process's pass; the head is small, so one scan.
        async with engine.begin() as conn:
            result = await conn.execute(delete(samples_head).where(samples_head.c.ts < raw_cutoff))
        counts["raw_deleted"] += max(result.rowcount or 0, 0)
    rolled_on = min(t.hwm for t in tiers[1:] if t.hwm is not None)
    counts["rollups_deleted"] = await _delete_before(
        engine, rollups, min(now - rollup_retention_s, rolled_on)
    )
    for tier in tiers[1:]:
        counts["coarse_deleted"] += await _delete_before(engine, tier.table, now - rollup_retention_s)
    if marks.oldest_raw is not None and marks.oldest_raw >= raw_cutoff:
        # Nothing was due: the oldest sample is still the one the mark names (polls only add
        # newer ones), so no probe of every series; there is one after retention deleted rows.
        return StoreMarks(tuple(tiers), marks.oldest_raw, raw_cut), counts
    async with engine.begin() as conn:
        oldest = await _oldest(conn, samples)
        if conn.dialect.name not in TS_INDEXED:
            await conn.execute(delete(store_meta).where(store_meta.c.key == RAW_PURGE_KEY))
            if oldest is None:
                await conn.execute(delete(store_meta).where(store_meta.c.key == RAW_OLDEST_KEY))
            else:
                await _write_meta(conn, RAW_OLDEST_KEY, repr(oldest))
    return StoreMarks(tuple(tiers), oldest, raw_cut), counts


def _cut_not_stored(marks: StoreMarks) -> float:
    """The cut before this pass's, none stored (migration 0013 seeds it): a store never rolled up
    was never cut; one that was may have been cut up to its oldest sample, and without samples up
    to the roll-up's mark (retention never cuts past it)."""
    hwm = marks.tiers[0].hwm
    if hwm is None:
        return -math.inf
    return marks.oldest_raw if marks.oldest_raw is not None else hwm


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
        first = await _oldest(conn, source)
        hwm = math.floor(first / step) * step if first is not None else done_until
    if done_until <= hwm:
        return hwm, 0
    bucket = (func.floor(source.c.ts / step) * step).label("bucket")
    total = 0
    # A long range (a first pass, or catching up after maintenance stopped) goes in slices of
    # whole steps, so each statement's groups fit the database's memory for aggregating.
    steps = math.ceil((done_until - hwm) / step - 1e-9)
    width = step * max(ROLLUP_SLICE_STEPS, math.ceil(steps / MAX_ROLLUP_SLICES))
    for k in range(math.ceil((done_until - hwm) / width)):
        lo, hi = hwm + k * width, min(done_until, hwm + (k + 1) * width)
        where = (source.c.ts >= lo, source.c.ts < hi, *_each_series(source, conn.dialect))
        if hi - lo <= step and lo == math.floor(lo / step) * step:
            # One step (every steady pass): its bucket is `lo`, and the rows come grouped by
            # series from the primary key. Bucketing by floor() sorted them all first and, on
            # SQLite, called SQLAlchemy's Python floor() once per row with the GIL held (~1.1 s
            # of CPU a pass at 12k series).
            rolled = (
                select(source.c.series_id, literal(lo, Double()).label("bucket"), *columns)
                .where(*where)
                .group_by(source.c.series_id)
            )
        else:
            rolled = (
                select(source.c.series_id, bucket, *columns)
                .where(*where)
                .group_by(source.c.series_id, bucket)
            )
        result = await conn.execute(
            insert(tier.table).from_select(["series_id", "ts", "count", "sum", "min", "max"], rolled)
        )
        total += max(result.rowcount or 0, 0)
    return done_until, total


async def _delete_before(
    engine: AsyncEngine, table: Table, cutoff: float, oldest: float | None = None
) -> int:
    """Delete the table's rows before `cutoff`, in slices from `oldest` (probed when not given)."""
    total = 0
    if oldest is None:
        async with engine.connect() as conn:
            oldest = await _oldest(conn, table)
    for _ in range(MAX_DELETE_BATCHES):
        if oldest is None or oldest >= cutoff:
            break
        # Delete by time slices rather than LIMIT, which not every dialect allows in DELETE.
        slice_end = min(cutoff, oldest + max(600.0, (cutoff - oldest) / 10))
        async with engine.begin() as conn:
            result = await conn.execute(
                delete(table).where(table.c.ts < slice_end, *_each_series(table, conn.dialect))
            )
        total += max(result.rowcount or 0, 0)
        # Nothing before slice_end is left: the next slice starts there (asking the table again
        # would cost a probe per series on samples).
        oldest = slice_end
    return total


def _each_series(table: Table, dialect: Dialect) -> list[ColumnElement[bool]]:
    """With a ts range, makes a read of samples one primary-key range per series (see above)."""
    if table is not samples or dialect.name in TS_INDEXED:
        return []
    ids = select(series.c.id).scalar_subquery()
    if dialect.name == "postgresql":
        # ANY(ARRAY(SELECT ...)): the ids are read once and samples_pkey is scanned by them;
        # `IN (SELECT ...)` is planned as a hash join over a sequential scan of every sample.
        return [samples.c.series_id == any_(func.array(ids))]
    return [samples.c.series_id.in_(ids)]


async def _oldest(conn: AsyncConnection, table: Table) -> float | None:
    if table is samples and conn.dialect.name not in TS_INDEXED:
        head = None
        if uses_head(conn.dialect.name):
            # SQLite does not push a correlated term into a UNION ALL (readable_samples): the
            # probe below would scan every sample. The head is small: one scan of it, read before
            # samples (rows only move from the head into samples, so a move committed between the
            # two reads cannot hide them from both).
            head = (await conn.execute(select(func.min(samples_head.c.ts)))).scalar()
        # The first ts of each series (one primary-key probe each), then the smallest of them.
        first = select(func.min(samples.c.ts)).where(samples.c.series_id == series.c.id).scalar_subquery()
        found = (await conn.execute(select(func.min(first)).select_from(series))).scalar()
        found = head if found is None else found if head is None else min(found, head)
    else:
        found = (await conn.execute(select(func.min(table.c.ts)))).scalar()
    return float(found) if found is not None else None


async def _read_meta(conn: AsyncConnection, key: str) -> float | None:
    """One stored mark, read in the caller's transaction."""
    return _float((await conn.execute(select(store_meta.c.value).where(store_meta.c.key == key))).scalar())


async def _write_meta(conn: AsyncConnection, key: str, value: str) -> None:
    result = await conn.execute(update(store_meta).where(store_meta.c.key == key).values(value=value))
    if result.rowcount == 0:
        await conn.execute(insert(store_meta).values(key=key, value=value))


def _float(value: str | None) -> float | None:
    return float(value) if value is not None else None
