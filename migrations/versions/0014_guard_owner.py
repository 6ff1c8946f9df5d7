"""The process that watches a guarded change (audit_changes.guard_owner), so that a process starting
interrupts only the guards of a process that is gone (poolscope/actions/fleet.py).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("audit_changes") as batch:
        batch.add_column(sa.Column("guard_owner", sa.String(160), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_changes") as batch:
        batch.drop_column("guard_owner")
