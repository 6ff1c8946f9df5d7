"""Incident snapshots: one row each, the versioned JSON document in a long text column (migration 0002)."""

from __future__ import annotations

from sqlalchemy import Column, Double, Integer, String, Table, Text
from sqlalchemy.dialects import mysql

from poolscope.store.tables import metadata

DocumentText = Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")

snapshot_snapshots = Table(
    "snapshot_snapshots",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("target", String(64), nullable=False),
    Column("created_at", Double, nullable=False),
    Column("moment_ts", Double, nullable=False),
    Column("window_from", Double, nullable=False),
    Column("window_to", Double, nullable=False),
    # collecting: the window after the moment is still open; complete: final.
    Column("status", String(16), nullable=False),
    Column("trigger", String(16), nullable=False),  # alert | manual | import
    Column("title", Text, nullable=False),
    Column("alert_id", Integer, nullable=True),
    Column("size_bytes", Integer, nullable=False),
    Column("document", DocumentText, nullable=False),
)
