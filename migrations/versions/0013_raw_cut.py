"""The store keeps retention's cut of raw samples (store_meta raw_cut, poolscope/store/rollup.py
RAW_CUT_KEY): charts read raw samples from it, where they read rollups from the oldest sample
before. Seeded here for a store that has rolled up (its oldest sample may mark a cut, as planned
until now). The new revision also keeps an older version from running on the store: it would
delete samples without moving the cut, and charts would read raw where only rollups are left.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

store_meta = sa.table(
    "store_meta", sa.column("key", sa.String), sa.column("value", sa.String)
)
samples = sa.table("samples", sa.column("ts", sa.Double))


def upgrade() -> None:
    conn = op.get_bind()
    keys = ("rollup_high_water_mark", "raw_oldest", "raw_cut")
    meta = dict(
        conn.execute(
            sa.select(store_meta.c.key, store_meta.c.value).where(
                store_meta.c.key.in_(keys)
            )
        ).all()
    )
    if "raw_cut" in meta or "rollup_high_water_mark" not in meta:
        return  # never rolled up, so never cut: maintain() stores the first cut
    cut = meta.get("raw_oldest")
    if cut is None and conn.dialect.name in ("mysql", "mariadb"):
        # MariaDB stores no oldest mark; its samples keep their index on ts (migration 0010).
        oldest = conn.execute(sa.select(sa.func.min(samples.c.ts))).scalar()
        cut = repr(float(oldest)) if oldest is not None else None
    # No sample left: retention may have cut up to the roll-up's mark, never past it.
    op.execute(
        store_meta.insert().values(
            key="raw_cut", value=cut or meta["rollup_high_water_mark"]
        )
    )


def downgrade() -> None:
    op.execute(store_meta.delete().where(store_meta.c.key == "raw_cut"))
