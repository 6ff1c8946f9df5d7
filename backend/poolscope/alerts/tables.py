"""Alert state, silences and the webhook delivery log (created by migration 0002)."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Double, Index, Integer, String, Table, Text

from poolscope.store.tables import metadata

alert_alerts = Table(
    "alert_alerts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("fingerprint", String(64), nullable=False),
    Column("target", String(64), nullable=False),
    Column("rule", String(64), nullable=False),
    Column("group_key", String(32), nullable=True),
    Column("severity", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("summary", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("value", Double, nullable=True),
    Column("labels", Text, nullable=False),
    Column("started_at", Double, nullable=False),
    Column("fired_at", Double, nullable=True),
    Column("resolved_at", Double, nullable=True),
    Column("last_active_at", Double, nullable=False),
    Column("poll_ts", Double, nullable=True),
    Column("flapping", Boolean, nullable=False, default=False),
    Column("acked_by", String(64), nullable=True),
    Column("acked_at", Double, nullable=True),
    Column("snapshot_id", Integer, nullable=True),
    Index("ix_alert_alerts_status", "status"),
    Index("ix_alert_alerts_fired_at", "fired_at"),
)

alert_silences = Table(
    "alert_silences",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("target", String(64), nullable=True),
    Column("rule", String(64), nullable=True),
    Column("group_key", String(32), nullable=True),
    Column("starts_at", Double, nullable=False),
    Column("ends_at", Double, nullable=False),
    Column("created_by", String(64), nullable=False),
    Column("comment", Text, nullable=False),
)

alert_deliveries = Table(
    "alert_deliveries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("receiver", String(64), nullable=False),
    Column("alert_id", Integer, nullable=True),
    Column("fingerprint", String(64), nullable=False),
    Column("alert_status", String(16), nullable=False),
    Column("outcome", String(16), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("http_status", Integer, nullable=True),
    Column("error", Text, nullable=True),
    Column("at", Double, nullable=False),
    Column("duration_ms", Double, nullable=True),
)
