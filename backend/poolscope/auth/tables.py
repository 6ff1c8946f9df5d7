"""Revoked sessions (migrations/versions/0004_revoked_sessions.py creates the table)."""

from __future__ import annotations

from sqlalchemy import Column, Double, String, Table

from poolscope.store.tables import metadata

# A row per logged-out session until the token would have expired anyway.
auth_revoked_sessions = Table(
    "auth_revoked_sessions",
    metadata,
    Column("sid", String(64), primary_key=True),
    Column("expires_at", Double, nullable=False),
)
