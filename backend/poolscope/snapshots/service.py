"""Incident snapshots: capture (automatic on a stall alert, or on demand), completion when the window
closes, listing, import with validation, and retention by count and size."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from pydantic import ValidationError
from sqlalchemy import delete, insert, select, update

from poolscope import __version__
from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.poller.target_poller import TargetPoller
from poolscope.schemas import Alert, TargetState
from poolscope.snapshots.audit_hook import variable_changes_in_window
from poolscope.snapshots.capture import capture_server_tables
from poolscope.snapshots.document import SnapshotDocument, SnapshotSummary, SnapshotWindow
from poolscope.snapshots.redact import redact_sql, redact_variables
from poolscope.snapshots.tables import snapshot_snapshots
from poolscope.store.sql import SqlStore
from poolscope.store.tables import series

log = logging.getLogger(__name__)

STALL_RULE = "group_stalled"


class SnapshotError(Exception):
    """A snapshot request that cannot be served; the message is shown to the user."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _redact_document(doc: SnapshotDocument) -> None:
    state = doc.state
    for q in state.queue:
        q.info, q.last_sql = redact_sql(q.info), redact_sql(q.last_sql)
    for s in state.sessions:
        s.info = redact_sql(s.info)
    if state.transactions:
        for t in state.transactions.items:
            t.query = redact_sql(t.query)
    for row in doc.server_tables.processlist:
        if isinstance(row.get("info"), str):
            row["info"] = redact_sql(row["info"])  # type: ignore[arg-type]
    for row in doc.server_tables.innodb_trx:
        if isinstance(row.get("trx_query"), str):
            row["trx_query"] = redact_sql(row["trx_query"])  # type: ignore[arg-type]
    for alert in doc.alerts:
        alert.description = redact_sql(alert.description) or ""
    doc.redacted_sql = True


class SnapshotService:
    def __init__(self, settings: Settings, store: SqlStore, alert_repo: AlertRepository) -> None:
        self.settings = settings
        self.config = settings.snapshots
        self.store = store
        self.alert_repo = alert_repo
        self._targets = {t.name: t for t in settings.targets}
        # The running pollers by target (set by the app): raw tables are read on their connection.
        self.pollers: dict[str, TargetPoller] = {}
        self._completions: dict[int, asyncio.Task[None]] = {}
        self._last_auto: dict[str, float] = {}
        self.link_alert: Any = None  # set by the app: AlertEngine.link_snapshot

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

    async def on_alert_firing(self, alert: Alert) -> None:
        """Engine listener: a stall alert captures a snapshot (once per target per cooldown)."""
        if alert.rule != STALL_RULE or not self.config.auto_on_stall:
            return
        last = self._last_auto.get(alert.target)
        now = time.time()
        if last is not None and now - last < self.config.auto_cooldown_s:
            return
        self._last_auto[alert.target] = now
        try:
            snapshot_id = await self.capture(alert.target, "alert", alert=alert)
        except Exception:
            log.exception("automatic snapshot of %s failed", alert.target)
            return
        if self.link_alert is not None and alert.id is not None:
            await self.link_alert(alert.id, snapshot_id)

    # --- capture ---------------------------------------------------------------------------

    async def capture(
        self, target: str, trigger: str, alert: Alert | None = None, title: str | None = None
    ) -> int:
        config = self._targets.get(target)
        if config is None:
            raise SnapshotError(f"unknown target {target!r}", 404)
        latest = await self.store.latest(target)
        if latest is None or latest[1] is None:
            raise SnapshotError(f"no state for {target!r} yet: nothing to capture", 409)
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
        )
        await self._fill_window(doc, until=min(now, window.to))
        snapshot_id = await self._insert(doc, status="collecting")
        self._schedule_completion(snapshot_id, window.to)
        await self._retain(keep=snapshot_id)
        log.info("snapshot %d of %s captured (%s)", snapshot_id, target, trigger)
        return snapshot_id

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
            _redact_document(doc)

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

    def _row_values(self, doc: SnapshotDocument, status: str) -> dict[str, Any]:
        text = doc.model_dump_json(by_alias=True)
        return {
            "target": doc.target,
            "created_at": doc.created_at,
            "moment_ts": doc.moment_ts,
            "window_from": doc.window.from_,
            "window_to": doc.window.to,
            "status": status,
            "trigger": doc.trigger,
            "title": doc.title,
            "alert_id": doc.alert_id,
            "size_bytes": len(text.encode()),
            "document": text,
        }

    async def _insert(self, doc: SnapshotDocument, status: str) -> int:
        async with self.store.engine.begin() as conn:
            result = await conn.execute(insert(snapshot_snapshots).values(**self._row_values(doc, status)))
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    async def _update(self, snapshot_id: int, doc: SnapshotDocument, status: str) -> None:
        async with self.store.engine.begin() as conn:
            await conn.execute(
                update(snapshot_snapshots)
                .where(snapshot_snapshots.c.id == snapshot_id)
                .values(**self._row_values(doc, status))
            )

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
            raise SnapshotError(f"no snapshot {snapshot_id}", 404)
        return str(text)

    async def document(self, snapshot_id: int) -> SnapshotDocument:
        return SnapshotDocument.model_validate_json(await self.document_text(snapshot_id))

    async def delete(self, snapshot_id: int) -> bool:
        async with self.store.engine.begin() as conn:
            result = await conn.execute(
                delete(snapshot_snapshots).where(snapshot_snapshots.c.id == snapshot_id)
            )
        task = self._completions.pop(snapshot_id, None)
        if task:
            task.cancel()
        return bool(result.rowcount)

    # --- import ----------------------------------------------------------------------------

    async def import_document(self, text: str) -> int:
        """Validate an exported snapshot against the schema and store it; nothing is stored on error."""
        try:
            raw = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SnapshotError(f"not a JSON document: {exc}", 422) from None
        if not isinstance(raw, dict) or raw.get("format") != "poolscope-snapshot":
            raise SnapshotError(
                'not a Poolscope snapshot (the JSON has no "format": "poolscope-snapshot")', 422
            )
        if raw.get("schema_version") != 1:
            raise SnapshotError(
                f"unsupported snapshot schema_version {raw.get('schema_version')!r} (this Poolscope reads 1)",
                422,
            )
        try:
            doc = SnapshotDocument.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(document)'}: {e['msg']}" for e in exc.errors()[:5]
            )
            more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
            raise SnapshotError(f"snapshot does not match schema version 1: {problems}{more}", 422) from None
        # Imported files come from elsewhere: apply this installation's rules on secrets too.
        doc.server_tables.global_variables = redact_variables(doc.server_tables.global_variables)
        doc.trigger = "import"
        if self.config.redact_sql_literals:
            _redact_document(doc)
        snapshot_id = await self._insert(doc, status="complete" if doc.window.complete else "collecting")
        if not doc.window.complete:
            # An import is never completed here (its metrics are not ours): mark it final as it is.
            await self._update(snapshot_id, doc, status="complete")
        await self._retain(keep=snapshot_id)
        return snapshot_id


def _state_copy(state: TargetState) -> TargetState:
    copy = state.model_copy(deep=True)
    copy.variables = redact_variables(copy.variables)
    return copy
