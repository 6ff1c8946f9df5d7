"""The time-series store on any async SQLAlchemy database (SQLite by default).

Raw samples are kept for hours; completed rollup steps (count/sum/min/max) for days, in two tiers.
Writing: store/ingest.py (and store/writer.py, which batches polls across targets); reading:
store/query.py; rollups and retention: store/rollup.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import bindparam, event, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from poolscope.clock import SYSTEM, Clock
from poolscope.metrics import Aggregation
from poolscope.schemas import MetricsOut, Sample, TargetInfo, TargetState
from poolscope.store.backlog import Backlog, Holding, orphans
from poolscope.store.head import (
    MOVE_INTERVAL_S,
    MOVE_SLICE_SERIES,
    move_head,
    readable_samples_sql,
    uses_head,
    warn_dropped,
)
from poolscope.store.health import StoreHealth
from poolscope.store.ingest import Poll, SampleIngest, canonical_labels
from poolscope.store.latest import LatestRows, target_latest
from poolscope.store.live import LiveHub
from poolscope.store.query import (
    RawRead,
    StoreMarks,
    count_samples,
    raw_only,
    raw_samples_to_latest,
    target_series,
)
from poolscope.store.query import query as chart_query
from poolscope.store.query import totals as range_totals
from poolscope.store.rollup import ROLLUP_HWM_KEY, read_marks
from poolscope.store.rollup import maintain as maintain_tiers
from poolscope.store.tables import given_or_own
from poolscope.store.writer import BatchWriter

log = logging.getLogger(__name__)

__all__ = ["ROLLUP_HWM_KEY", "Poll", "SqlStore", "canonical_labels"]
# Tier marks read from the database (another process may be the one running maintain()) are
# re-read after this long.
MARKS_TTL_S = 10.0
# WAL pages between automatic checkpoints (SQLite's default 1,000). Once each series fills a page
# of its own, a poller's batch dirties a page per sample: at 300 targets ~12k pages a second, so
# the default checkpointed (and fsynced) a dozen times a second. 10,000 pages (40 MB) cost 3-13 %
# less CPU and 10-55 % less wall per sample (warmbench, 3.6 M rows). A killed process
# loses nothing either way; power loss can lose what came since the last checkpoint
# (synchronous=NORMAL): about a second of samples at 300 targets, longer for a small fleet (the
# OS still writes the WAL file out within its dirty-page expiry, ~30 s on Linux).
WAL_AUTOCHECKPOINT_PAGES = 10_000


def _stored_polls_sql(dialect: str) -> Any:
    """(target, ts) of the stored polls of targets in a time range: each poll has one target_up sample."""
    return text(
        f"SELECT series.target, s.ts FROM {readable_samples_sql(dialect)} s"
        " JOIN series ON series.id = s.series_id WHERE series.metric = 'target_up'"
        " AND series.target IN :targets AND s.ts BETWEEN :lo AND :hi"
    ).bindparams(bindparam("targets", expanding=True))


def chart_step(start: float, end: float, points: int, min_step_s: float) -> float:
    """The bucket width query() uses for at most `points` buckets over the range."""
    return max(min_step_s, (end - start) / max(points, 1))


def _sqlite_tuning(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    # WAL: readers (API) never block the writer (poller); a killed process loses nothing committed.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
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
        holding: Holding | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.url = url
        self.raw_retention_s = raw_retention_s
        self.rollup_retention_s = rollup_retention_s
        self.rollup_step_s = rollup_step_s
        self.engine = engine or create_async_engine(url)
        self.dialect = make_url(url).get_backend_name()
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_tuning)
        # The live channel of this process: the scheduler publishes each poll to it (and the alert
        # engine its changes) as they are made; in an API process store/feed.py fills it from the store.
        self.hub = LiveHub()
        # Sample rows and their bulk insert (store/ingest.py).
        self.samples = SampleIngest(self.dialect)
        # Each target's latest poll, readable by every process (store/latest.py).
        self.latest_rows = LatestRows(self.engine)
        self._marks: StoreMarks | None = None
        self._marks_at = 0.0
        # What this process knows of the store's health, and what it holds while the store fails.
        holding = holding or Holding()
        spool = holding.spool_file()
        self.health = StoreHealth(
            holding.node,
            status_dir=holding.spool_dir,
            secrets=[p for p in (make_url(url).username, make_url(url).password) if p],
            clock=clock,
        )
        backlog = Backlog(holding.memory_bytes, holding.spool_bytes, spool)
        adopted: list[bytes] = []
        if spool is not None and holding.spool_dir is not None:
            for orphan in orphans(holding.spool_dir, holding.host, spool):
                if records := backlog.adopt(orphan):
                    adopted.append(records)
                    log.warning(
                        "store: %d bytes held for the store by a stopped process (%s) will be written",
                        len(records),
                        orphan.name,
                    )
        # Polls from the scheduler go through this: one transaction for many targets' polls.
        self.writer = BatchWriter(self, backlog=backlog, health=self.health, clock=clock)
        if adopted:
            self.writer.adopted(b"".join(adopted))
        # SQLite: the poll writes' own connection (see _write_transaction), one write at a time.
        self._write_conn: AsyncConnection | None = None
        self._write_lock = asyncio.Lock()
        # Batches being written, and targets forgotten meanwhile: a batch holding a forgotten
        # target's last poll (a poll cancelled after its write began) would put its caches back.
        self._writing = 0
        self._forget_after_writes: set[str] = set()
        # SQLite: when this process next offers to move the samples head (store/head.py).
        self._next_move = time.monotonic() + MOVE_INTERVAL_S
        self._mover: asyncio.Task[None] | None = None

    async def close(self) -> None:
        await self.writer.stop()  # what it accepted is stored before the engine goes
        if self._mover is not None:
            await self._mover
        if uses_head(self.dialect):
            try:
                await self.move_head()
            except Exception:  # nothing lost: the rows stay in the head, readable, moved later
                log.warning("moving the samples head at close failed; the next move takes it", exc_info=True)
        async with self._write_lock:
            if self._write_conn is not None:
                await self._write_conn.close()
                self._write_conn = None
        await self.engine.dispose()

    # --- writing -------------------------------------------------------------------------

    def forget(self, target: str) -> None:
        """The scheduler stopped polling the target here (removed, or its lease moved): drop what
        this process keeps per target for writing its polls (store/ingest.py, store/latest.py)."""
        if self._writing:
            self._forget_after_writes.add(target)
        self._forget_now(target)

    def _forget_now(self, target: str) -> None:
        self.samples.forget(target)
        self.latest_rows.forget(target)

    async def write_poll(
        self, info: TargetInfo, state: TargetState | None, poll_samples: Sequence[Sample], ts: float
    ) -> None:
        """Store one poll's samples and the target's latest state."""
        await self.write_polls([Poll(info, state, poll_samples, ts)])

    async def write_polls(
        self, polls: Sequence[Poll], *, after: Awaitable[None] | None = None, latest: bool = True
    ) -> None:
        """Store many polls (of any targets) in one transaction. Live subscribers and the alert
        engine had each poll from the scheduler already (poller/scheduler.py).

        All or nothing: on an error nothing of the batch is stored (store/writer.py retries).
        `after` (store/writer.py, batches in flight): the samples are inserted first, then this is
        awaited (the batch before is done) before the latest rows are written and committed.
        `latest=False`: the samples only (polls held while the store failed: write_held).
        """
        self._writing += 1
        try:
            rows = await self.samples.rows(self.engine, polls)
            async with self._write_transaction() as conn:
                if not latest:
                    await self.samples.insert(conn, rows, open_transaction=True)
                elif after is None:
                    # Latest rows first: on PostgreSQL they open the transaction the COPY then joins.
                    await self.latest_rows.write(conn, polls)
                    await self.samples.insert(conn, rows)
                else:
                    await self.samples.insert(conn, rows, open_transaction=True)
                    await after
                    await self.latest_rows.write(conn, polls)
        finally:
            self._writing -= 1
            if not self._writing and self._forget_after_writes:
                for target in self._forget_after_writes:
                    self._forget_now(target)
                self._forget_after_writes.clear()
        self._after_commit(polls, rows)

    async def write_held(self, polls: Sequence[Poll]) -> None:
        """Write the samples of polls held while the store failed, each once: a poll whose
        target_up sample is stored already (a write whose commit was not answered, a spool read
        again) is left out, so writing them again never doubles a row."""
        keys = {(p.info.name, p.ts) for p in polls}
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                _stored_polls_sql(self.dialect),
                {
                    "targets": sorted({t for t, _ in keys}),
                    "lo": min(ts for _, ts in keys),
                    "hi": max(ts for _, ts in keys),
                },
            )
            stored = {(r.target, float(r.ts)) for r in rows}
        await self.write_polls([p for p in polls if (p.info.name, p.ts) not in stored], latest=False)

    async def write_latest(self, polls: Sequence[Poll]) -> None:
        """The latest rows of these polls, each only where the stored row is older (another
        poller may have taken the target meanwhile and written newer ones)."""
        async with self.engine.connect() as conn:
            stored = dict(
                (
                    await conn.execute(
                        select(target_latest.c.target, target_latest.c.ts).where(
                            target_latest.c.target.in_({p.info.name for p in polls})
                        )
                    )
                ).all()
            )
        newer = [p for p in polls if p.ts > stored.get(p.info.name, -math.inf)]
        if newer:
            async with self._write_transaction() as conn:
                await self.latest_rows.write(conn, newer)

    def _after_commit(self, polls: Sequence[Poll], rows: Sequence[Any]) -> None:
        """The batch is committed: nothing here raises, or the batch writer would write it again
        (and once a move took its rows out of the head, the head would take them twice)."""
        if uses_head(self.dialect) and time.monotonic() >= self._next_move:
            self._next_move = time.monotonic() + MOVE_INTERVAL_S
            if self._mover is None or self._mover.done():
                try:  # not awaited: the batch's polls are acknowledged now, not after the move
                    self._mover = asyncio.create_task(self._move_due(), name="samples-head-move")
                except RuntimeError:  # the loop is closing: moved at close() or by the next process
                    log.warning("store: the samples head move was not started", exc_info=True)
        marks = self._marks
        if marks is not None and marks.oldest_raw is None and rows:
            self._marks = replace(marks, oldest_raw=min(r[1] for r in rows))

    @contextlib.asynccontextmanager
    async def _write_transaction(self) -> AsyncIterator[AsyncConnection]:
        """A transaction for write_polls. SQLite: on a connection kept for them (a pool checkout
        and return per batch cost the poller as much as the batch's statements); it is closed
        after any error, and a new one taken for the next write. Other engines: engine.begin()."""
        if self.dialect != "sqlite":
            async with self.engine.begin() as conn:
                yield conn
            return
        async with self._write_lock:
            if self._write_conn is None:
                self._write_conn = await self.engine.connect()
            conn = self._write_conn
            try:
                async with conn.begin():
                    yield conn
            except BaseException:
                self._write_conn = None
                with contextlib.suppress(Exception):
                    await conn.close()
                raise

    async def move_head(self, min_interval_s: float = 0.0) -> int | None:
        """SQLite: move the samples head into samples (store/head.py); the rows moved, or None when
        another process moved less than min_interval_s ago."""
        total, dropped, start, gate = 0, 0, 0, min_interval_s
        try:
            while True:
                # One transaction per slice of series (MOVE_SLICE_SERIES): batches go in between.
                async with self._write_transaction() as conn:
                    done = await move_head(conn, time.time(), gate, start, MOVE_SLICE_SERIES)
                if done is None:
                    return None
                total, dropped, gate = total + done.rows, dropped + done.dropped, 0.0
                if done.following is None:
                    return total
                start = done.following
        finally:
            warn_dropped(dropped)  # also what the slices before a failed one dropped

    async def _move_due(self) -> None:
        try:
            await self.move_head(MOVE_INTERVAL_S)
        except Exception:  # the batches are stored (and readable in the head): moved next time
            log.warning(
                "moving the samples head failed; it is retried in %.0f s", MOVE_INTERVAL_S, exc_info=True
            )

    # --- reading -------------------------------------------------------------------------

    async def latest_samples(self, target: str) -> list[Sample]:
        """The samples of the target's last poll (a down poll's are only target_up), or none."""
        latest = await self.latest_rows.get(target)
        return latest.samples if latest else []

    async def latest(
        self, target: str, conn: AsyncConnection | None = None
    ) -> tuple[TargetInfo, TargetState | None] | None:
        """The target's info and last good state; `conn`: on that connection (see reading())."""
        return await self.latest_rows.info_state(target, conn)

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncConnection]:
        """One connection for a run of short reads (the recommender's latest row and history): a
        pool checkout and its rollback on return cost as much CPU as such a read."""
        async with self.engine.connect() as conn:
            yield conn

    async def query(
        self,
        target: str,
        metrics: Iterable[str],
        start: float,
        end: float,
        points: int,
        agg: Aggregation = "avg",
        min_step_s: float = 1.0,
    ) -> MetricsOut:
        """Series for the range, at most `points` buckets each (the chart's width)."""
        step = chart_step(start, end, points, min_step_s)
        async with self.engine.connect() as conn:
            marks = await self._read_marks(conn)
            return await chart_query(conn, marks, target, list(metrics), start, end, step, agg)

    async def totals(
        self, target: str, metrics: Iterable[str], start: float, end: float, agg: Aggregation = "avg"
    ) -> list[tuple[str, dict[str, str], float, int]]:
        """Each series of the metrics summed over the range (agg "max": its largest value)."""
        async with self.engine.connect() as conn:
            marks = await self._read_marks(conn)
            return await range_totals(conn, marks, target, list(metrics), start, end, agg)

    async def raw_history_to_latest(
        self,
        target: str,
        metrics: Sequence[str],
        lo: float,
        hi: float,
        *,
        start: float,
        step: float,
        with_series: bool = True,
        count: tuple[float, float] | None = None,
        conn: AsyncConnection | None = None,
    ) -> RawRead | None:
        """The ts of the target's latest row and the raw samples of its series of these metrics
        with lo <= ts <= hi, read at one point in the commit order (store/query.py
        raw_samples_to_latest); also its series (with_series) and how many samples they have in
        the range `count` (both ends included). None when query() of [start, hi] at `step` would
        read rollups too (then only query() answers). A poll's samples commit with the latest row
        that shows its ts (write_polls) and a target's polls are written in turn, so every sample
        up to that ts is there: the next read of a window may start after it (recommend/history.py).
        `conn`: on that connection (see reading())."""
        async with given_or_own(self.engine, conn) as conn:
            if not raw_only(await self._read_marks(conn), start, hi, step):
                return None
            latest, rows = await raw_samples_to_latest(conn, target, metrics, lo, hi)
            # After the samples: the series of every sample read are there already.
            series_rows = await target_series(conn, target, metrics) if with_series else None
            counted = await count_samples(conn, target, metrics, *count) if count is not None else None
            return RawRead(latest, series_rows, rows, counted)

    # --- maintenance ---------------------------------------------------------------------

    async def _read_marks(self, conn) -> StoreMarks:  # type: ignore[no-untyped-def]
        # Read once per process, then kept current by maintain() and the write path.
        if self._marks is None or time.monotonic() - self._marks_at > MARKS_TTL_S:
            self._marks = await read_marks(conn, self.rollup_step_s)
            self._marks_at = time.monotonic()
        return self._marks

    async def maintain(self, now: float | None = None) -> dict[str, int]:
        """Roll up completed steps, then drop raw samples and rollups past their retention."""
        now = time.time() if now is None else now
        if uses_head(self.dialect):
            # Most of the head in slices first; the roll-up's own transaction moves what is left.
            try:
                await self.move_head()
            except Exception:
                # The pass goes on: the roll-up moves the head again in its own transaction, and
                # rolls up only what precedes the head's oldest row if that fails too (store/rollup.py).
                log.warning("moving the samples head before maintenance failed", exc_info=True)
        async with self.engine.connect() as conn:
            marks = await read_marks(conn, self.rollup_step_s)
        self._marks, counts = await maintain_tiers(
            self.engine, marks, now, self.raw_retention_s, self.rollup_retention_s
        )
        self._marks_at = time.monotonic()
        return counts
