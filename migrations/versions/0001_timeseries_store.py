"""The generic time-series store: series, samples, rollups, latest target state.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

LONG_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "series",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("metric", sa.String(128), nullable=False),
        sa.Column("labels", sa.String(512), nullable=False),
        sa.UniqueConstraint("target", "metric", "labels", name="uq_series_identity"),
    )
    op.create_table(
        "samples",
        sa.Column("series_id", sa.Integer, primary_key=True),
        sa.Column("ts", sa.Double, primary_key=True),
        sa.Column("value", sa.Double, nullable=True),
        # SQLite: the primary key holds the row, so a range scan by (series_id, ts) needs no
        # second lookup per row (3x faster 24 h charts in `make bench`). Other dialects ignore it.
        sqlite_with_rowid=False,
    )
    # Retention deletes by time across all series.
    op.create_index("ix_samples_ts", "samples", ["ts"])
    op.create_table(
        "rollups",
        sa.Column("series_id", sa.Integer, primary_key=True),
        sa.Column("ts", sa.Double, primary_key=True),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("sum", sa.Double, nullable=True),
        sa.Column("min", sa.Double, nullable=True),
        sa.Column("max", sa.Double, nullable=True),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_rollups_ts", "rollups", ["ts"])
    op.create_table(
        "target_state",
        sa.Column("target", sa.String(64), primary_key=True),
        sa.Column("ts", sa.Double, nullable=False),
        # TEXT is 64 KB on MySQL/MariaDB; a busy target's state (queue, sessions) can be larger.
        sa.Column("info", LONG_TEXT, nullable=False),
        sa.Column("state", LONG_TEXT, nullable=True),
    )
    op.create_table(
        "store_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(256), nullable=False),
    )


def downgrade() -> None:
    for table in ("store_meta", "target_state", "rollups", "samples", "series"):
        op.drop_table(table)
