"""A coarse rollup tier (10 rollup steps per row) for long charts.

Revision ID: 0005_rollups_coarse
Revises: 0004
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_rollups_coarse"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rollups_coarse",
        sa.Column("series_id", sa.Integer, primary_key=True),
        sa.Column("ts", sa.Double, primary_key=True),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("sum", sa.Double, nullable=True),
        sa.Column("min", sa.Double, nullable=True),
        sa.Column("max", sa.Double, nullable=True),
        sqlite_with_rowid=False,
    )
    # Retention deletes by time across all series.
    op.create_index("ix_rollups_coarse_ts", "rollups_coarse", ["ts"])


def downgrade() -> None:
    op.drop_table("rollups_coarse")
