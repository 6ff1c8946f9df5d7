"""The fleet's tables: live poller processes and who polls which target.

The Alembic migration migrations/versions/0006_fleet_leases.py creates them.
"""

from __future__ import annotations

from sqlalchemy import Column, Double, Integer, MetaData, String, Table

metadata = MetaData()

# One row per running poller process; a row whose heartbeat is older than the lease TTL is dead.
fleet_members = Table(
    "fleet_members",
    metadata,
    Column("node_id", String(128), primary_key=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", Double, nullable=False),
    Column("heartbeat_at", Double, nullable=False),
)

# One row per target being polled: only `owner` polls it, and only until expires_at (store clock).
target_leases = Table(
    "target_leases",
    metadata,
    Column("target", String(64), primary_key=True),
    Column("owner", String(128), nullable=False),
    Column("expires_at", Double, nullable=False),
)
