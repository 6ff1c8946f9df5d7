"""Alert persistence: alert instances, silences and the webhook delivery log, on the store's database."""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from poolscope.alerts.tables import alert_alerts, alert_deliveries, alert_silences
from poolscope.schemas import Alert, Delivery, Silence

# The delivery log keeps this many newest rows.
DELIVERY_LOG_ROWS = 5000


def _alert_row(alert: Alert) -> dict[str, Any]:
    return {
        "fingerprint": alert.fingerprint,
        "target": alert.target,
        "rule": alert.rule,
        "group_key": alert.group,
        "severity": alert.severity,
        "status": alert.status,
        "summary": alert.summary,
        "description": alert.description,
        "value": alert.value,
        "labels": json.dumps(alert.labels, sort_keys=True),
        "started_at": alert.started_at,
        "fired_at": alert.fired_at,
        "resolved_at": alert.resolved_at,
        "last_active_at": alert.last_active_at,
        "poll_ts": alert.poll_ts,
        "flapping": alert.flapping,
        "acked_by": alert.acked_by,
        "acked_at": alert.acked_at,
        "snapshot_id": alert.snapshot_id,
    }


def _alert_from(row: Any) -> Alert:
    return Alert(
        id=row.id,
        fingerprint=row.fingerprint,
        target=row.target,
        rule=row.rule,
        group=row.group_key,
        severity=row.severity,
        status=row.status,
        summary=row.summary,
        description=row.description,
        value=row.value,
        labels=json.loads(row.labels or "{}"),
        started_at=row.started_at,
        fired_at=row.fired_at,
        resolved_at=row.resolved_at,
        last_active_at=row.last_active_at,
        poll_ts=row.poll_ts,
        flapping=bool(row.flapping),
        acked_by=row.acked_by,
        acked_at=row.acked_at,
        snapshot_id=row.snapshot_id,
    )


def _silence_from(row: Any) -> Silence:
    return Silence(
        id=row.id,
        target=row.target,
        rule=row.rule,
        group=row.group_key,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        created_by=row.created_by,
        comment=row.comment,
    )


class AlertRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._deliveries_written = 0

    # --- alerts ----------------------------------------------------------------------------

    async def insert(self, alert: Alert) -> int:
        async with self.engine.begin() as conn:
            result = await conn.execute(insert(alert_alerts).values(**_alert_row(alert)))
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    async def upsert(self, alert: Alert) -> int:
        """Write a fired alert's row, found by its fingerprint and fired_at (an alert's identity),
        inserted when absent; returns its id. Written again after a write whose answer was lost
        (store/writer.py holds alert changes while the store fails), it is still one row."""
        assert alert.fired_at is not None, "only a fired alert is stored"
        row = _alert_row(alert)
        if alert.acked_by is None:
            del row["acked_by"], row["acked_at"]  # as in save(): an ack is never taken back
        c = alert_alerts.c
        async with self.engine.begin() as conn:
            found = (
                await conn.execute(
                    select(c.id).where(c.fired_at == alert.fired_at, c.fingerprint == alert.fingerprint)
                )
            ).first()
            if found is not None:
                await conn.execute(update(alert_alerts).where(c.id == found.id).values(**row))
                return int(found.id)
            result = await conn.execute(insert(alert_alerts).values(**row))
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    async def acks(self, ids: Collection[int]) -> dict[int, tuple[str, float | None]]:
        """Who acknowledged which of these alerts, and when: in a fleet an API process takes the
        ack, and the poller that judges the alert learns it here."""
        if not ids:
            return {}
        c = alert_alerts.c
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(c.id, c.acked_by, c.acked_at).where(c.id.in_(sorted(ids)), c.acked_by.is_not(None))
            )
            return {int(r.id): (str(r.acked_by), r.acked_at) for r in rows}

    async def link_snapshot(self, fingerprint: str, fired_at: float, snapshot_id: int) -> None:
        """Record the snapshot taken for the alert that fired then (whatever its status now)."""
        c = alert_alerts.c
        async with self.engine.begin() as conn:
            await conn.execute(
                update(alert_alerts)
                .where(c.fired_at == fired_at, c.fingerprint == fingerprint)
                .values(snapshot_id=snapshot_id)
            )

    async def save(self, alert: Alert) -> None:
        assert alert.id is not None
        row = _alert_row(alert)
        if alert.acked_by is None:
            # An ack is only ever added, and perhaps by another process (an API node) than the poller that evaluates the alert: never write it back to none.
            del row["acked_by"], row["acked_at"]
        async with self.engine.begin() as conn:
            await conn.execute(update(alert_alerts).where(alert_alerts.c.id == alert.id).values(**row))

    async def open_alerts(self) -> list[Alert]:
        """Alerts that were firing when the backend last stopped: they are restored, not forgotten."""
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(alert_alerts).where(alert_alerts.c.status == "firing"))
            return [_alert_from(r) for r in rows]

    async def get(self, alert_id: int) -> Alert | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(alert_alerts).where(alert_alerts.c.id == alert_id))).first()
        return _alert_from(row) if row else None

    async def history(
        self,
        target: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 200,
    ) -> list[Alert]:
        """Alerts that fired, newest first; with since/until: those active at some time in that range."""
        stmt = select(alert_alerts)
        if target is not None:
            stmt = stmt.where(alert_alerts.c.target == target)
        if until is not None:
            stmt = stmt.where(alert_alerts.c.fired_at <= until)
        if since is not None:
            stmt = stmt.where(or_(alert_alerts.c.resolved_at.is_(None), alert_alerts.c.resolved_at >= since))
        stmt = stmt.order_by(alert_alerts.c.fired_at.desc()).limit(limit)
        async with self.engine.connect() as conn:
            return [_alert_from(r) for r in await conn.execute(stmt)]

    async def count_by_status(self) -> dict[str, int]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(alert_alerts.c.status, func.count()).group_by(alert_alerts.c.status)
            )
            return {str(r[0]): int(r[1]) for r in rows}

    # --- silences --------------------------------------------------------------------------

    async def add_silence(
        self,
        target: str | None,
        rule: str | None,
        group: str | None,
        ends_at: float,
        created_by: str,
        comment: str,
    ) -> Silence:
        now = time.time()
        values = {
            "target": target,
            "rule": rule,
            "group_key": group,
            "starts_at": now,
            "ends_at": ends_at,
            "created_by": created_by,
            "comment": comment,
        }
        async with self.engine.begin() as conn:
            result = await conn.execute(insert(alert_silences).values(**values))
            silence_id = int(result.inserted_primary_key[0])  # type: ignore[index]
        return Silence(
            id=silence_id,
            target=target,
            rule=rule,
            group=group,
            starts_at=now,
            ends_at=ends_at,
            created_by=created_by,
            comment=comment,
        )

    async def expire_silence(self, silence_id: int, now: float) -> Silence | None:
        async with self.engine.begin() as conn:
            row = (
                await conn.execute(select(alert_silences).where(alert_silences.c.id == silence_id))
            ).first()
            if row is None:
                return None
            ends_at = min(row.ends_at, now)
            await conn.execute(
                update(alert_silences).where(alert_silences.c.id == silence_id).values(ends_at=ends_at)
            )
        silence = _silence_from(row)
        silence.ends_at = ends_at
        return silence

    async def silences(self, active_at: float | None = None) -> list[Silence]:
        stmt = select(alert_silences).order_by(alert_silences.c.id.desc())
        if active_at is not None:
            stmt = stmt.where(alert_silences.c.ends_at > active_at)
        async with self.engine.connect() as conn:
            return [_silence_from(r) for r in await conn.execute(stmt.limit(500))]

    # --- delivery log ----------------------------------------------------------------------

    async def log_delivery(self, **values: Any) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(insert(alert_deliveries).values(**values))
            self._deliveries_written += 1
            if self._deliveries_written % 100 == 0:
                newest = (await conn.execute(select(func.max(alert_deliveries.c.id)))).scalar() or 0
                await conn.execute(
                    delete(alert_deliveries).where(alert_deliveries.c.id <= newest - DELIVERY_LOG_ROWS)
                )

    async def deliveries(self, receiver: str | None = None, limit: int = 200) -> list[Delivery]:
        stmt = select(alert_deliveries).order_by(alert_deliveries.c.id.desc()).limit(limit)
        if receiver is not None:
            stmt = stmt.where(alert_deliveries.c.receiver == receiver)
        async with self.engine.connect() as conn:
            return [
                Delivery(
                    id=r.id,
                    receiver=r.receiver,
                    alert_id=r.alert_id,
                    fingerprint=r.fingerprint,
                    alert_status=r.alert_status,
                    outcome=r.outcome,
                    attempt=r.attempt,
                    http_status=r.http_status,
                    error=r.error,
                    at=r.at,
                    duration_ms=r.duration_ms,
                )
                for r in await conn.execute(stmt)
            ]
