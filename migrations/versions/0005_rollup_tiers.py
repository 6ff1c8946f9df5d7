"""Coarser rollup tiers (3 and 10 rollup steps per row) for day- and week-long charts.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TABLES = ("rollups_x3", "rollups_x10")


def upgrade() -> None:
    for name in TABLES:
        op.create_table(
            name,
            sa.Column("series_id", sa.Integer, primary_key=True),
            sa.Column("ts", sa.Double, primary_key=True),
            sa.Column("count", sa.Integer, nullable=False),
            sa.Column("sum", sa.Double, nullable=True),
            sa.Column("min", sa.Double, nullable=True),
            sa.Column("max", sa.Double, nullable=True),
            sqlite_with_rowid=False,
        )
        # Retention deletes by time across all series.
        op.create_index(f"ix_{name}_ts", name, ["ts"])


def downgrade() -> None:
    for name in TABLES:
        op.drop_table(name)
