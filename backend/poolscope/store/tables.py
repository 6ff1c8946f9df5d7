"""The generic time-series schema: series (metric + labels) and samples; a new metric needs no migration.

Alembic migrations in migrations/ create these; the definitions here are what the code queries.
"""

from __future__ import annotations

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

samples = Table(
    "samples",
    metadata,
    Column("series_id", Integer, primary_key=True),
    Column("ts", Double, primary_key=True),
    Column("value", Double, nullable=True),
    sqlite_with_rowid=False,
)

# One row per series per rollup step (default 60 s): enough for a day-long chart to stay fast.
rollups = Table(
    "rollups",
    metadata,
    Column("series_id", Integer, primary_key=True),
    Column("ts", Double, primary_key=True),
    Column("count", Integer, nullable=False),
    Column("sum", Double, nullable=True),
    Column("min", Double, nullable=True),
    Column("max", Double, nullable=True),
    sqlite_with_rowid=False,
)

store_meta = Table(
    "store_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", String(256), nullable=False),
)
