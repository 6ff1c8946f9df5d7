"""SQLite and PostgreSQL: drop ix_samples_ts, the samples' index on ts alone.

Every inserted sample updated it: ~1.3 µs of PostgreSQL's ~5 µs of server work per sample and a
quarter of its WAL, ~10 % of SQLite's insert work (docs/decisions/0008-no-time-index-on-samples.md). It served
only maintenance's reads by time (store/rollup.py), which now go per series through the primary
key (series_id, ts). MariaDB keeps it (store/rollup.py TS_INDEXED).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def _applies() -> bool:
    return op.get_bind().dialect.name in ("sqlite", "postgresql")


def upgrade() -> None:
    if _applies():
        op.drop_index("ix_samples_ts", table_name="samples")


def downgrade() -> None:
    if _applies():
        op.create_index("ix_samples_ts", "samples", ["ts"])
