"""The audit table: every change Poolscope made (or tried to make) to a server variable."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Double, Integer, String, Table, Text

from poolscope.store.tables import metadata

audit_changes = Table(
    "audit_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", Double, nullable=False),
    Column("target", String(64), nullable=False, index=True),
    Column("action", String(16), nullable=False),  # apply | revert | auto_revert
    Column("variable", String(64), nullable=False),
    Column("old_value", String(256), nullable=True),
    Column("new_value", String(256), nullable=False),
    Column("result", String(16), nullable=False),  # applied | unverified | failed
    Column("detail", Text, nullable=True),  # warnings, the server's error, what was read back
    Column("user", String(64), nullable=False),
    Column("address", String(64), nullable=True),
    Column("recommendation_id", String(160), nullable=True),
    Column("reverts_id", Integer, nullable=True),  # the change this one undid
    Column("reverted_by_id", Integer, nullable=True),
    Column("port_kind", String(16), nullable=True),  # extra_port | port: where the change was made
    Column("guarded", Boolean, nullable=False, default=False),
    Column(
        "guard_status", String(16), nullable=True
    ),  # watching | kept | reverted | superseded | interrupted
    Column("guard_until", Double, nullable=True),
    Column("guard_note", Text, nullable=True),
    # The process that watches it (actions/fleet.py process_owner): interrupted only once it is gone.
    Column("guard_owner", String(160), nullable=True),
)
