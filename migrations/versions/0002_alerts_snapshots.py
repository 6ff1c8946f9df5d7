"""Alerts (state, silences, webhook delivery log) and incident snapshots.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

LONG_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "alert_alerts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("group_key", sa.String(32), nullable=True),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("value", sa.Double, nullable=True),
        sa.Column("labels", sa.Text, nullable=False),
        sa.Column("started_at", sa.Double, nullable=False),
        sa.Column("fired_at", sa.Double, nullable=True),
        sa.Column("resolved_at", sa.Double, nullable=True),
        sa.Column("last_active_at", sa.Double, nullable=False),
        sa.Column("poll_ts", sa.Double, nullable=True),
        sa.Column("flapping", sa.Boolean, nullable=False),
        sa.Column("acked_by", sa.String(64), nullable=True),
        sa.Column("acked_at", sa.Double, nullable=True),
        sa.Column("snapshot_id", sa.Integer, nullable=True),
    )
    op.create_index("ix_alert_alerts_status", "alert_alerts", ["status"])
    op.create_index("ix_alert_alerts_fired_at", "alert_alerts", ["fired_at"])
    op.create_table(
        "alert_silences",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("target", sa.String(64), nullable=True),
        sa.Column("rule", sa.String(64), nullable=True),
        sa.Column("group_key", sa.String(32), nullable=True),
        sa.Column("starts_at", sa.Double, nullable=False),
        sa.Column("ends_at", sa.Double, nullable=False),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
    )
    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("receiver", sa.String(64), nullable=False),
        sa.Column("alert_id", sa.Integer, nullable=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("alert_status", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("http_status", sa.Integer, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("at", sa.Double, nullable=False),
        sa.Column("duration_ms", sa.Double, nullable=True),
    )
    op.create_table(
        "snapshot_snapshots",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.Column("moment_ts", sa.Double, nullable=False),
        sa.Column("window_from", sa.Double, nullable=False),
        sa.Column("window_to", sa.Double, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("alert_id", sa.Integer, nullable=True),
        sa.Column("size_bytes", sa.Integer, nullable=False),
        # A snapshot with a long window and a busy queue can pass MEDIUMTEXT's 16 MB.
        sa.Column("document", LONG_TEXT, nullable=False),
    )


def downgrade() -> None:
    for table in ("snapshot_snapshots", "alert_deliveries", "alert_silences", "alert_alerts"):
        op.drop_table(table)
