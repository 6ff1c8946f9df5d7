"""The generic time-series schema: series (metric + labels) and samples; a new metric needs no migration.

Alembic migrations in migrations/ create these; the definitions here are what the code queries.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy import (
    Column,
    Double,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

metadata = MetaData()

# TEXT is 64 KB on MySQL/MariaDB; a busy target's state (queue, sessions) can be larger.
LongText = Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")

series = Table(
    "series",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("target", String(64), nullable=False),
    Column("metric", String(128), nullable=False),
    # Canonical JSON (sorted keys) so the same label set always maps to the same row.
    Column("labels", String(512), nullable=False),
    UniqueConstraint("target", "metric", "labels", name="uq_series_identity"),
)

# No index on ts alone on SQLite and PostgreSQL (migration 0010): maintenance reads samples by time
# per series through the primary key (store/rollup.py).
samples = Table(
    "samples",
    metadata,
    Column("series_id", Integer, primary_key=True),
    Column("ts", Double, primary_key=True),
    Column("value", Double, nullable=True),
    sqlite_with_rowid=False,
)

# SQLite only: new samples land here and are moved into samples every ~10 s (store/head.py);
# reads see both through head.readable_samples().
samples_head = Table(
    "samples_head",
    metadata,
    Column("series_id", Integer, primary_key=True),
    Column("ts", Double, primary_key=True),
    Column("value", Double, nullable=True),
    sqlite_with_rowid=False,
)


def _rollup_table(name: str) -> Table:
    return Table(
        name,
        metadata,
        Column("series_id", Integer, primary_key=True),
        Column("ts", Double, primary_key=True),
        Column("count", Integer, nullable=False),
        Column("sum", Double, nullable=True),
        Column("min", Double, nullable=True),
        Column("max", Double, nullable=True),
        sqlite_with_rowid=False,
    )


# One row per series per rollup step (default 60 s).
rollups = _rollup_table("rollups")
# Coarser tiers are rolled up from `rollups` (store/rollup.py TIER_FACTORS): one row per 3 and per
# 10 rollup steps, so a day-long chart reads one row per point and a week-long one a tenth.
rollups_x3 = _rollup_table("rollups_x3")
rollups_x10 = _rollup_table("rollups_x10")

store_meta = Table(
    "store_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", String(256), nullable=False),
)


@contextlib.asynccontextmanager
async def given_or_own(engine: AsyncEngine, conn: AsyncConnection | None) -> AsyncIterator[AsyncConnection]:
    """`conn` when a caller reads several things on one (recommend/reads.py), else a connection
    of its own for this read."""
    if conn is not None:
        yield conn
        return
    async with engine.connect() as own:
        yield own
