"""Incident snapshots: capture (automatic on a stall alert, or on demand), completion when the window
closes, listing, import, report and archive (in worker processes, reports cached), and retention
by count and size.

It reads downstream of the alert engine only: raw server tables through the running pollers it is
built with (a narrow LivePoller each), and an automatic capture returns its id to the engine, which
records the link on the alert."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, insert, select, update

from poolscope import __version__
from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.errors import Conflict, NotFound, Unavailable
from poolscope.schemas import Alert, PollEvent, TargetInfo, TargetState
from poolscope.snapshots.audit_hook import variable_changes_in_window
from poolscope.snapshots.cache import CacheKey, ReportCache
from poolscope.snapshots.capture import LivePoller, capture_server_tables
from poolscope.snapshots.document import SnapshotDocument, SnapshotSummary, SnapshotWindow, stored_row
from poolscope.snapshots.export import base_name
from poolscope.snapshots.jobs import archive_job, import_job, report_job
from poolscope.snapshots.redact import redact_variables
from poolscope.snapshots.report import UTC_VIEW, ReportView
from poolscope.snapshots.scrub import redact_document_sql
from poolscope.snapshots.tables import snapshot_snapshots
from poolscope.snapshots.workers import SnapshotWorkers
from poolscope.store.health import is_outage
from poolscope.store.sql import SqlStore
from poolscope.store.tables import series

log = logging.getLogger(__name__)

STALL_RULE = "group_stalled"


class SnapshotService:
    def __init__(
        self,
        settings: Settings,
        store: SqlStore,
        alert_repo: AlertRepository,
        pollers: Mapping[str, LivePoller] | None = None,
    ) -> None:
        self.settings = settings
        self.config = settings.snapshots
        self.store = store
        self.alert_repo = alert_repo
        self._targets = {t.name: t for t in settings.targets}
        # The running pollers by target: raw tables are read on their connection, between polls.
        self.pollers: Mapping[str, LivePoller] = pollers or {}
        store.writer.handle("snapshot", self._write_held)
        self._completions: dict[int, asyncio.Task[None]] = {}
        # Per target: when the last automatic snapshot was asked for, and its id and window once
        # captured (None if the capture failed).
        self._last_auto: dict[str, tuple[float, asyncio.Future[tuple[int, SnapshotWindow] | None]]] = {}
        self.workers = SnapshotWorkers(self.config.work_concurrency, self.config.work_wait_s)
        self.reports = ReportCache(int(self.config.report_cache_mb * 1024 * 1024))
        # Reports being rendered, so that several requests for one wait for one job.
        self._rendering: dict[CacheKey, asyncio.Future[str]] = {}

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Snapshots still collecting when the backend stopped are completed (now or when due)."""
        async with self.store.engine.connect() as conn:
            rows = await conn.execute(
                select(snapshot_snapshots.c.id, snapshot_snapshots.c.window_to).where(
                    snapshot_snapshots.c.status == "collecting"
                )
            )
            for row in rows:
                self._schedule_completion(row.id, row.window_to)

    async def stop(self) -> None:
        for task in self._completions.values():
            task.cancel()
        for task in list(self._completions.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._completions.clear()
        await self.workers.stop()

    async def on_alert_firing(self, alert: Alert, poll: PollEvent | None = None) -> int | None:
        """A stall alert captures a snapshot (once per target per cooldown); returns its id.

        Inside the cooldown an alert gets the target's last automatic snapshot when that window
        covers the alert's poll: both groups of one stall fire together, and a flapping stall fires
        again, and the operator who opens the second alert needs the incident's snapshot as much as
        the one who opened the first. A capture still running is waited for."""
        if alert.rule != STALL_RULE or not self.config.auto_on_stall:
            return None
        last = self._last_auto.get(alert.target)
        now = time.time()
        if last is not None and now - last[0] < self.config.auto_cooldown_s:
            earlier = await asyncio.shield(last[1])
            moment = alert.poll_ts if alert.poll_ts is not None else alert.fired_at
            if earlier is None or moment is None or not earlier[1].from_ <= moment <= earlier[1].to:
                return None
            # Deleted since (by hand, or by retention in whichever process): no link to a 404.
            return earlier[0] if await self._stored(earlier[0]) else None
        done: asyncio.Future[tuple[int, SnapshotWindow] | None] = asyncio.get_running_loop().create_future()
        self._last_auto[alert.target] = (now, done)
        taken: tuple[int, SnapshotWindow] | None = None
        try:
            latest = (poll.target_info, poll.state) if poll is not None and poll.state is not None else None
            taken = await self._capture(alert.target, "alert", alert=alert, latest=latest)
        except Exception:
            log.exception("automatic snapshot of %s failed", alert.target)
        finally:
            # Also when cancelled: the alerts waiting for this capture must not wait for ever.
            if not done.done():
                done.set_result(taken)
            # Nothing captured: the next stall alert tries again rather than the cooldown passing
            # without a snapshot (a capture fails before reading the server, e.g. no state yet).
            if taken is None and self._last_auto.get(alert.target, (0.0, None))[1] is done:
                del self._last_auto[alert.target]
        return taken[0] if taken is not None else None

    async def capture(
        self, target: str, trigger: str, alert: Alert | None = None, title: str | None = None
    ) -> int:
        return (await self._capture(target, trigger, alert, title))[0]

    async def _capture(
        self,
        target: str,
        trigger: str,
        alert: Alert | None = None,
        title: str | None = None,
        latest: tuple[TargetInfo, TargetState | None] | None = None,
    ) -> tuple[int, SnapshotWindow]:
        """`latest`: the poll to start from (an alert's, given by the engine), else the store's."""
        config = self._targets.get(target)
        if config is None:
            raise NotFound(f"unknown target {target!r}")
        if latest is None:
            latest = await self.store.latest(target)
        if latest is None or latest[1] is None:
            raise Conflict(f"no state for {target!r} yet: nothing to capture")
        info, state = latest[0], latest[1]
        assert state is not None
        tables = await capture_server_tables(config, self.config.capture_timeout_s, self.pollers.get(target))
        now = time.time()
        moment = state.ts
        window = SnapshotWindow(
            from_=moment - self.config.window_before_s,
            to=moment + self.config.window_after_s,
            before_s=self.config.window_before_s,
            after_s=self.config.window_after_s,
            complete=False,
        )
        doc = SnapshotDocument(
            poolscope_version=__version__,
            title=title or (alert.summary if alert else f"{target}: snapshot"),
            target=target,
            trigger=trigger,  # type: ignore[arg-type]
            alert_id=alert.id if alert else None,
            created_at=now,
            moment_ts=moment,
            window=window,
            target_info=info,
            state=_state_copy(state),
            server_tables=tables,
            flight_recorder=poller.flight_recorder() if (poller := self.pollers.get(target)) else [],
        )
        doc.holders = [group.model_copy(deep=True) for group in doc.state.holders if group.stalled]
        try:
            await self._fill_window(doc, until=min(now, window.to))
        except Exception as error:  # the store fails: the window is read when the capture completes
            if not is_outage(error):
                raise
        snapshot_id = await self._insert_or_hold(stored_row(doc, status="collecting"))
        self._schedule_completion(snapshot_id, window.to)
        with contextlib.suppress(Exception):  # retention is done by the next capture too
            await self._retain(keep=snapshot_id)
        log.info("snapshot %d of %s captured (%s)", snapshot_id, target, trigger)
        return snapshot_id, window

    async def _fill_window(self, doc: SnapshotDocument, until: float) -> None:
        span = max(until - doc.window.from_, 1.0)
        points = min(self.config.max_points, max(int(span / self.settings.poll_interval_s) + 1, 10))
        async with self.store.engine.connect() as conn:
            metrics = [
                r[0]
                for r in await conn.execute(
                    select(series.c.metric).where(series.c.target == doc.target).distinct()
                )
            ]
        if metrics:
            out = await self.store.query(doc.target, metrics, doc.window.from_, until, points)
            doc.series, doc.step_s = out.series, out.step_s
        doc.alerts = await self.alert_repo.history(doc.target, since=doc.window.from_, until=until, limit=500)
        doc.variable_changes = await variable_changes_in_window(
            self.store.engine, doc.target, doc.window.from_, doc.window.to
        )
        if self.config.redact_sql_literals:
            redact_document_sql(doc)

    def _schedule_completion(self, snapshot_id: int, window_to: float) -> None:
        async def complete_later() -> None:
            # One poll after the window closes, so its last second is stored.
            await asyncio.sleep(max(window_to - time.time(), 0) + self.settings.poll_interval_s)
            try:
                await self.complete(snapshot_id)
            finally:
                self._completions.pop(snapshot_id, None)

        self._completions[snapshot_id] = asyncio.create_task(complete_later(), name=f"snapshot:{snapshot_id}")

    async def complete(self, snapshot_id: int) -> None:
        doc = await self.document(snapshot_id)
        await self._fill_window(doc, until=doc.window.to)
        doc.window.complete = True
        await self._update(snapshot_id, doc, status="complete")

    # --- storage ---------------------------------------------------------------------------

    async def _stored(self, snapshot_id: int) -> bool:
        async with self.store.engine.connect() as conn:
            stmt = select(snapshot_snapshots.c.id).where(snapshot_snapshots.c.id == snapshot_id)
            return (await conn.execute(stmt)).first() is not None

    async def _insert(self, row: dict[str, Any]) -> int:
        async with self.store.engine.begin() as conn:
            result = await conn.execute(insert(snapshot_snapshots).values(**row))
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    async def _insert_or_hold(self, row: dict[str, Any]) -> int:
        """Insert a captured document; while the store fails it is held for the store in order
        (store/writer.py) and this returns once it is written: the capture is not lost."""
        written: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()

        def done(row_id: int | None) -> None:
            if not written.done():
                written.set_result(row_id)

        row_id = await self.store.writer.write_op(
            "snapshot", f"snapshot:{row['target']}@{row['created_at']}", row, done
        )
        if row_id is None:
            row_id = await written
        if row_id is None:
            raise Unavailable("the snapshot could not be stored")
        return row_id

    async def _write_held(self, row: dict[str, Any]) -> int | None:
        """A captured document, inserted once: written again (its commit unanswered), it is found."""
        c = snapshot_snapshots.c
        async with self.store.engine.connect() as conn:
            found = (
                await conn.execute(
                    select(c.id).where(c.target == row["target"], c.created_at == row["created_at"])
                )
            ).first()
        return int(found.id) if found is not None else await self._insert(row)

    async def _update(self, snapshot_id: int, doc: SnapshotDocument, status: str) -> None:
        async with self.store.engine.begin() as conn:
            await conn.execute(
                update(snapshot_snapshots)
                .where(snapshot_snapshots.c.id == snapshot_id)
                .values(**stored_row(doc, status))
            )
        self.reports.drop(snapshot_id)

    async def _retain(self, keep: int) -> int:
        """Delete the oldest snapshots beyond max_count or max_total_mb (never the one just made)."""
        limit_bytes = self.config.max_total_mb * 1024 * 1024
        async with self.store.engine.begin() as conn:
            rows = (
                await conn.execute(
                    select(snapshot_snapshots.c.id, snapshot_snapshots.c.size_bytes).order_by(
                        snapshot_snapshots.c.created_at.desc(), snapshot_snapshots.c.id.desc()
                    )
                )
            ).all()
            doomed, total, kept = [], 0, 0
            for row in rows:
                if row.id != keep and (kept >= self.config.max_count or total + row.size_bytes > limit_bytes):
                    doomed.append(row.id)
                    continue
                kept += 1
                total += row.size_bytes
            if doomed:
                await conn.execute(delete(snapshot_snapshots).where(snapshot_snapshots.c.id.in_(doomed)))
        for snapshot_id in doomed:
            self.reports.drop(snapshot_id)
            task = self._completions.pop(snapshot_id, None)
            if task:
                task.cancel()
        return len(doomed)

    async def list(self, target: str | None = None) -> list[SnapshotSummary]:
        cols = [c for c in snapshot_snapshots.c if c.name != "document"]
        stmt = select(*cols).order_by(snapshot_snapshots.c.created_at.desc(), snapshot_snapshots.c.id.desc())
        if target is not None:
            stmt = stmt.where(snapshot_snapshots.c.target == target)
        async with self.store.engine.connect() as conn:
            return [
                SnapshotSummary(
                    id=r.id,
                    target=r.target,
                    title=r.title,
                    trigger=r.trigger,
                    status=r.status,
                    created_at=r.created_at,
                    moment_ts=r.moment_ts,
                    window_from=r.window_from,
                    window_to=r.window_to,
                    alert_id=r.alert_id,
                    size_bytes=r.size_bytes,
                )
                for r in await conn.execute(stmt)
            ]

    async def document_text(self, snapshot_id: int) -> str:
        async with self.store.engine.connect() as conn:
            text = (
                await conn.execute(
                    select(snapshot_snapshots.c.document).where(snapshot_snapshots.c.id == snapshot_id)
                )
            ).scalar()
        if text is None:
            raise NotFound(f"no snapshot {snapshot_id}")
        return str(text)

    async def document(self, snapshot_id: int) -> SnapshotDocument:
        return SnapshotDocument.model_validate_json(await self.document_text(snapshot_id))

    async def delete(self, snapshot_id: int) -> bool:
        async with self.store.engine.begin() as conn:
            result = await conn.execute(
                delete(snapshot_snapshots).where(snapshot_snapshots.c.id == snapshot_id)
            )
        self.reports.drop(snapshot_id)
        task = self._completions.pop(snapshot_id, None)
        if task:
            task.cancel()
        return bool(result.rowcount)

    # --- import, report, archive (in worker processes) -------------------------------------

    async def import_file(self, data: bytes) -> int:
        """Check an uploaded snapshot (JSON or archive) and store it; nothing is stored on error."""
        row = await self.workers.run(import_job, data, self.config, time.time())
        snapshot_id = await self._insert(row)
        await self._retain(keep=snapshot_id)
        return snapshot_id

    async def _version(self, snapshot_id: int, view: ReportView = UTC_VIEW) -> tuple[CacheKey, str]:
        """The report cache's key (id, content version, view) and the download's name, from the row.

        A document is written by its capture or import, and once more when its window completes
        (status and size change then; _update drops the cached report too).
        """
        cols = snapshot_snapshots.c
        async with self.store.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(cols.target, cols.moment_ts, cols.status, cols.size_bytes).where(
                        cols.id == snapshot_id
                    )
                )
            ).first()
        if row is None:
            raise NotFound(f"no snapshot {snapshot_id}")
        key = (snapshot_id, f"{row.status}:{row.size_bytes}", view.key())
        return key, base_name(row.target, row.moment_ts, snapshot_id)

    async def export_name(self, snapshot_id: int) -> str:
        """The download's file name, without extension."""
        return (await self._version(snapshot_id))[1]

    async def report_html(self, snapshot_id: int, view: ReportView = UTC_VIEW) -> str:
        key, _ = await self._version(snapshot_id, view)
        cached = self.reports.get(key)
        if cached is not None:
            return cached
        pending = self._rendering.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._rendering[key] = future
        try:
            html = await self.workers.run(report_job, await self.document_text(snapshot_id), view)
        except BaseException as exc:  # cancelled too: whoever waits for this job must not hang
            future.set_exception(
                exc if isinstance(exc, Exception) else Unavailable("the report was cancelled; try again")
            )
            future.exception()  # retrieved here, so no warning when nobody else was waiting
            raise
        finally:
            self._rendering.pop(key, None)
        future.set_result(html)
        self.reports.put(key, html)
        return html

    async def archive(self, snapshot_id: int, view: ReportView = UTC_VIEW) -> tuple[str, bytes]:
        """The archive's file name (without .zip) and its bytes; its report comes from the cache
        when there, and goes into it otherwise."""
        key, name = await self._version(snapshot_id, view)
        text = await self.document_text(snapshot_id)
        data, html = await self.workers.run(archive_job, text, name, self.reports.get(key), view)
        self.reports.put(key, html)
        return name, data


def _state_copy(state: TargetState) -> TargetState:
    copy = state.model_copy(deep=True)
    copy.variables = redact_variables(copy.variables)
    return copy
