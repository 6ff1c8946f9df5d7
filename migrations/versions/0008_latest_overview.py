"""The overview row's figures in each target's latest row, built once per poll by the poller, so
GET /api/overview decodes no TargetInfo (poolscope/store/latest.py overview_fields_json).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

LONG_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def upgrade() -> None:
    # NULL in the rows already there: readers build it from the info until the next poll.
    op.add_column("target_latest", sa.Column("overview", LONG_TEXT, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("target_latest") as batch:
        batch.drop_column("overview")
