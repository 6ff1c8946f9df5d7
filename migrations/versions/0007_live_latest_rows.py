"""Latest rows (one per target, rewritten every poll) and the alert event log: what API processes
read and what the cross-process live feed tails (poolscope/store/latest.py, poolscope/store/feed.py).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

LONG_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")
SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "target_latest",
        sa.Column("target", sa.String(64), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("ts", sa.Double, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("info", LONG_TEXT, nullable=False),
        sa.Column("samples", LONG_TEXT, nullable=False),
        sa.Column("state", LONG_TEXT, nullable=True),
        sa.Column("state_fresh", sa.Boolean, nullable=False),
    )
    op.create_index("ix_target_latest_seq", "target_latest", ["seq"])
    op.create_table(
        "live_alert_events",
        sa.Column("seq", SEQ, primary_key=True, autoincrement=True),
        sa.Column("ts", sa.Double, nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("data", LONG_TEXT, nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE SEQUENCE target_latest_seq")
    # The latest row replaces the throttled state row: the last good state lives there now.
    op.execute(
        "INSERT INTO target_latest (target, seq, ts, status, info, samples, state, state_fresh) "
        "SELECT target, 0, ts, 'starting', info, '[]', state, false FROM target_state"
    )
    op.drop_table("target_state")


def downgrade() -> None:
    op.create_table(
        "target_state",
        sa.Column("target", sa.String(64), primary_key=True),
        sa.Column("ts", sa.Double, nullable=False),
        sa.Column("info", LONG_TEXT, nullable=False),
        sa.Column("state", LONG_TEXT, nullable=True),
    )
    op.execute(
        "INSERT INTO target_state (target, ts, info, state) SELECT target, ts, info, state FROM target_latest"
    )
    op.drop_table("live_alert_events")
    op.drop_table("target_latest")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP SEQUENCE target_latest_seq")
