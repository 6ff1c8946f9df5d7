"""Fleet members and target leases: which poller process polls which target.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fleet_members",
        sa.Column("node_id", sa.String(128), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("started_at", sa.Double, nullable=False),
        sa.Column("heartbeat_at", sa.Double, nullable=False),
    )
    op.create_table(
        "target_leases",
        sa.Column("target", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("expires_at", sa.Double, nullable=False),
    )
    op.create_index("ix_target_leases_owner", "target_leases", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_target_leases_owner", "target_leases")
    op.drop_table("target_leases")
    op.drop_table("fleet_members")
