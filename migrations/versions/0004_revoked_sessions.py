"""Revoked sessions, so a logout survives a restart.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "auth_revoked_sessions",
        sa.Column("sid", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.Double, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("auth_revoked_sessions")
