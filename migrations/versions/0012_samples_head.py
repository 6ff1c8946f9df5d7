"""samples_head: where SQLite stores new samples until they are moved into samples, in
(series_id, ts) order, every ~10 s (poolscope/store/head.py). Created on every dialect so the
schema is one; only SQLite's store writes to it.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "samples_head",
        sa.Column("series_id", sa.Integer, primary_key=True),
        sa.Column("ts", sa.Double, primary_key=True),
        sa.Column("value", sa.Double, nullable=True),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.drop_table("samples_head")
