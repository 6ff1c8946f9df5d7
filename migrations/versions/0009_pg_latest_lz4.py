"""PostgreSQL: the latest rows' JSON columns compressed with lz4 instead of pglz.

Every poll rewrites its target's row, whose state JSON (~14 kB for an 8-group server) PostgreSQL
compresses before storing it out of line; with pglz that was ~1.2 µs of server CPU per ingested
sample at 94 samples per poll, with lz4 ~0.2 µs (docs/decisions/0007-batched-writes.md). Only values
written afterwards use it; a server built without lz4 keeps pglz. SQLite and MariaDB: nothing.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COLUMNS = ("info", "samples", "state", "overview")


def _set_compression(method: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    # default_toast_compression lists the methods this server was built with.
    methods = bind.execute(
        sa.text(
            "SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'"
        )
    ).scalar()
    if method not in (methods or []):
        return
    for column in COLUMNS:
        op.execute(
            f"ALTER TABLE target_latest ALTER COLUMN {column} SET COMPRESSION {method}"
        )


def upgrade() -> None:
    _set_compression("lz4")


def downgrade() -> None:
    _set_compression("pglz")
