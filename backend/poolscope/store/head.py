"""SQLite: new samples go to a small table of the samples' shape, `samples_head`, and are moved
into `samples` in (series_id, ts) order every ~10 s, so each series' page of samples is written
once per move instead of once per poll (docs/STORE-PERF.md, "Fifth round": once every series
fills a page of its own, an insert straight into samples dirtied a page per sample).

Every read of raw samples goes through readable_samples(): both tables on SQLite, samples
elsewhere (PostgreSQL and MariaDB write to samples directly). A move is one transaction, so a
process that dies before or during one leaves its rows in the head, readable, for the next move.
"""

from __future__ import annotations

from sqlalchemy import Dialect, FromClause, select, union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.store.tables import samples, samples_head

# Dialects whose store writes new samples to samples_head.
HEAD_DIALECTS = frozenset({"sqlite"})
# Seconds between moves, over all processes writing to the store (store_meta MOVED_AT_KEY).
MOVE_INTERVAL_S = 10.0
MOVED_AT_KEY = "samples_head_moved_at"

# SQLite pushes a query's WHERE terms into each arm of a UNION ALL subquery, so a read by
# (series_id, ts) range is a primary-key range on both tables (tests/store/test_samples_head.py).
_READABLE = union_all(
    select(samples.c.series_id, samples.c.ts, samples.c.value),
    select(samples_head.c.series_id, samples_head.c.ts, samples_head.c.value),
).subquery("readable_samples")

_GATE_ROW = "INSERT OR IGNORE INTO store_meta (key, value) VALUES (?, '0')"
# A stamp in the future (the clock was set back) does not hold moves off.
_GATE = (
    "UPDATE store_meta SET value = ? WHERE key = ? AND (CAST(value AS REAL) <= ? OR CAST(value AS REAL) > ?)"
)
_STAMP = "UPDATE store_meta SET value = ? WHERE key = ?"
# OR IGNORE: a (series_id, ts) already in samples keeps its first value (the insert into the head
# no longer sees samples, so a duplicate is caught here rather than failing a poll's batch).
_MOVE = (
    "INSERT OR IGNORE INTO samples (series_id, ts, value)"
    " SELECT series_id, ts, value FROM samples_head WHERE series_id >= ? AND series_id < ?"
    " ORDER BY series_id, ts"
)
_CLEAR = "DELETE FROM samples_head WHERE series_id >= ? AND series_id < ?"
_LAST_SERIES = "SELECT max(series_id) FROM samples_head"
# Series per move transaction: a move of every series writes a page per series and held the write
# lock for all of them at once (polls waited behind it and missed their second); slices let the
# poll batches in between.
MOVE_SLICE_SERIES = 1024


def uses_head(dialect_name: str) -> bool:
    return dialect_name in HEAD_DIALECTS


def readable_samples(dialect: Dialect) -> FromClause:
    """What raw reads select from: (series_id, ts, value) of every stored sample."""
    return _READABLE if uses_head(dialect.name) else samples


def readable_samples_sql(dialect_name: str) -> str:
    """readable_samples() for a statement written as text (probes, tests): a table expression."""
    if not uses_head(dialect_name):
        return "samples"
    return (
        "(SELECT series_id, ts, value FROM samples UNION ALL SELECT series_id, ts, value FROM samples_head)"
    )


async def move_head(
    conn: AsyncConnection,
    now: float,
    min_interval_s: float = 0.0,
    series_from: int = 0,
    series_slice: int | None = None,
) -> tuple[int, int | None] | None:
    """Move the head's rows of series ids [series_from, series_from + series_slice) (all with no
    slice) into samples inside the connection's transaction (the caller commits): the rows moved
    and where the next slice starts (None: no series left), or None when another process moved
    less than min_interval_s ago.

    The first statement writes, so the transaction holds SQLite's write lock from its start: no
    poll's rows reach the slice between the copy and the delete, and two processes' moves run one
    after the other (the second finds the slice empty, or is gated by the stamp)."""
    await conn.exec_driver_sql(_GATE_ROW, (MOVED_AT_KEY,))
    if min_interval_s > 0:
        gate = await conn.exec_driver_sql(_GATE, (repr(now), MOVED_AT_KEY, now - min_interval_s, now))
        if gate.rowcount == 0:
            return None
    else:
        await conn.exec_driver_sql(_STAMP, (repr(now), MOVED_AT_KEY))
    upto = series_from + series_slice if series_slice is not None else 2**62
    moved = await conn.exec_driver_sql(_MOVE, (series_from, upto))
    await conn.exec_driver_sql(_CLEAR, (series_from, upto))
    last = (await conn.exec_driver_sql(_LAST_SERIES)).scalar()
    following = upto if last is not None and last >= upto else None
    return max(moved.rowcount or 0, 0), following
