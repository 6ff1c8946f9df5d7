"""Audit of variable changes (apply, revert, guarded auto-revert).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_changes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ts", sa.Double, nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("variable", sa.String(64), nullable=False),
        sa.Column("old_value", sa.String(256), nullable=True),
        sa.Column("new_value", sa.String(256), nullable=False),
        sa.Column("result", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text, nullable=True),
        sa.Column("user", sa.String(64), nullable=False),
        sa.Column("address", sa.String(64), nullable=True),
        sa.Column("recommendation_id", sa.String(160), nullable=True),
        sa.Column("reverts_id", sa.Integer, nullable=True),
        sa.Column("reverted_by_id", sa.Integer, nullable=True),
        sa.Column("port_kind", sa.String(16), nullable=True),
        sa.Column("guarded", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("guard_status", sa.String(16), nullable=True),
        sa.Column("guard_until", sa.Double, nullable=True),
        sa.Column("guard_note", sa.Text, nullable=True),
    )
    op.create_index("ix_audit_changes_target", "audit_changes", ["target"])


def downgrade() -> None:
    op.drop_index("ix_audit_changes_target", table_name="audit_changes")
    op.drop_table("audit_changes")
