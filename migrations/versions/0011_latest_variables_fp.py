"""A fingerprint of the state's variables in each target's latest row, so an API process sees a
variable change without decoding the state (poolscope/store/latest.py variables_fingerprint).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL in the rows already there until their target's next good poll.
    op.add_column(
        "target_latest", sa.Column("variables_fp", sa.String(32), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("target_latest") as batch:
        batch.drop_column("variables_fp")
