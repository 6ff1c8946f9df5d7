"""SQLite: new samples go to a small table of the samples' shape, `samples_head`, and are moved
into `samples` in (series_id, ts) order every ~10 s, so each series' page of samples is written
once per move instead of once per poll (once every series fills a page of its own, an insert
straight into samples dirtied a page per sample: docs/decisions/0009-sqlite-samples-head.md).

Every read of raw samples goes through readable_samples(): both tables on SQLite, samples
elsewhere (PostgreSQL and MariaDB write to samples directly). A move is one transaction, so a
process that dies before or during one leaves its rows in the head, readable, for the next move.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from sqlalchemy import Dialect, FromClause, func, select, union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.store.tables import samples, samples_head

log = logging.getLogger(__name__)

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
# does not see samples, so a duplicate is caught here rather than failing a poll's batch). Until the
# move, reads see both rows. The move counts what it dropped (cleared minus moved: nothing else
# writes between the two statements) and warns about it (warn_dropped). The write path does not
# probe samples instead: +6 µs per sample (docs/decisions/0009-sqlite-samples-head.md).
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
# The roll-up's move runs inside its transaction: a failed move rolls back to here, not the pass.
_SAVEPOINT = "SAVEPOINT samples_head_move"
_RELEASE = "RELEASE samples_head_move"
_ROLLBACK_TO = "ROLLBACK TO samples_head_move"


class Moved(NamedTuple):
    """One move_head() transaction."""

    rows: int  # head rows now in samples
    dropped: int  # head rows whose (series_id, ts) samples had already: deleted, the first value kept
    following: int | None  # where the next slice starts; None: no series left


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
) -> Moved | None:
    """Move the head's rows of series ids [series_from, series_from + series_slice) (all with no
    slice) into samples inside the connection's transaction (the caller commits), or return None
    when another process moved less than min_interval_s ago.

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
    cleared = await conn.exec_driver_sql(_CLEAR, (series_from, upto))
    last = (await conn.exec_driver_sql(_LAST_SERIES)).scalar()
    following = upto if last is not None and last >= upto else None
    rows = max(moved.rowcount or 0, 0)
    return Moved(rows, max((cleared.rowcount or 0) - rows, 0), following)


def warn_dropped(dropped: int) -> None:
    """Once per move (all its slices): how many head rows samples had already. The count only:
    no values, no series, nothing of the store's address."""
    if dropped:
        log.warning(
            "moving the samples head dropped %d samples whose series and time were stored already"
            " (the stored value is kept; until the move, reads counted both)",
            dropped,
        )


async def move_head_or_hold(conn: AsyncConnection, now: float) -> float | None:
    """Move the whole head inside the caller's transaction (maintenance's roll-up); None when it
    moved. If the move fails, only the move is rolled back (a savepoint; the transaction is opened
    by a write first, or the savepoint would be the transaction and RELEASE would commit it) and
    the oldest ts still in the head is returned: the roll-up stops before its step, so no head row
    falls behind the high-water mark unrolled. A failure that ends the whole transaction (SQLite
    rolls back by itself on a full disk or an I/O error) makes ROLLBACK TO fail: that raises."""
    await conn.exec_driver_sql(_GATE_ROW, (MOVED_AT_KEY,))
    await conn.exec_driver_sql(_SAVEPOINT)
    try:
        done = await move_head(conn, now)
    except Exception:
        await conn.exec_driver_sql(_ROLLBACK_TO)
        await conn.exec_driver_sql(_RELEASE)
        log.warning("moving the samples head failed; maintenance rolls up what samples hold", exc_info=True)
        return (await conn.execute(select(func.min(samples_head.c.ts)))).scalar()
    await conn.exec_driver_sql(_RELEASE)
    if done is not None:
        warn_dropped(done.dropped)
    return None
