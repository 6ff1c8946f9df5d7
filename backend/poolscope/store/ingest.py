"""Writing samples: series ids from an in-process cache (new series inserted in bulk, in their own
transaction) and every sample of a batch in one statement, the fastest way each driver offers.

SQLite: one executemany of plain tuples on the driver (SQLAlchemy's per-row parameter processing
cost more than the insert itself). PostgreSQL: COPY through asyncpg. Any other dialect (MariaDB):
SQLAlchemy's executemany.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.tables import samples, series

SampleRow = tuple[int, float, float | None]
# (target, metric, canonical labels JSON): the identity of a series row.
SeriesKey = tuple[str, str, str]
SAMPLE_COLUMNS = ["series_id", "ts", "value"]
INSERT_SQL = "INSERT INTO samples (series_id, ts, value) VALUES (?, ?, ?)"


@dataclass(frozen=True, slots=True)
class Poll:
    """One poll as the store takes it."""

    info: TargetInfo
    state: TargetState | None
    samples: Sequence[Sample]
    ts: float


def canonical_labels(labels: dict[str, str]) -> str:
    return json.dumps(labels, sort_keys=True, separators=(",", ":"))


class SampleIngest:
    """Sample rows of polls and their bulk insert, for one dialect.

    Series ids come from an in-process cache, so a sample costs a dict lookup rather than a query.
    New series are inserted (insert-or-ignore, so another process inserting the same series at
    once is harmless) and committed before the samples that use them: an id cached here is never
    one a rolled-back transaction handed out.
    """

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self._ids: dict[SeriesKey, int] = {}
        # Per target, what a sample is looked up by without encoding the canonical key: the metric
        # alone for unlabeled samples (most of them), else the metric and the labels' items in the
        # order the collector built them.
        self._plain: dict[str, dict[str, int]] = {}
        self._labeled: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], int]] = {}

    async def rows(self, engine: AsyncEngine, polls: Iterable[Poll]) -> list[SampleRow]:
        """The (series_id, ts, value) rows of the polls' samples, non-finite values as NULL."""
        pending: list[tuple[str, str, tuple[tuple[str, str], ...], float, float | None]] = []
        out: list[SampleRow] = []
        append = out.append
        isfinite = math.isfinite
        for poll in polls:
            target = poll.info.name
            plain = self._plain.get(target)
            if plain is None:
                plain = self._plain[target] = {}
                self._labeled[target] = {}
            plain_id, labeled_id = plain.get, self._labeled[target].get
            ts = float(poll.ts)
            for s in poll.samples:
                labels = s.labels
                sid = labeled_id((s.metric, tuple(labels.items()))) if labels else plain_id(s.metric)
                value = s.value
                if value is not None and (value.__class__ is not float or not isfinite(value)):
                    value = float(value) if isfinite(value) else None
                if sid is None:
                    pending.append((target, s.metric, tuple(labels.items()), ts, value))
                else:
                    append((sid, ts, value))
        if pending:
            await self._resolve(engine, {(t, m, canonical_labels(dict(i))) for t, m, i, _, _ in pending})
            for target, metric, items, ts, value in pending:
                sid = self._ids[(target, metric, canonical_labels(dict(items)))]
                if items:
                    self._labeled[target][(metric, items)] = sid
                else:
                    self._plain[target][metric] = sid
                append((sid, ts, value))
        return out

    async def _resolve(self, engine: AsyncEngine, keys: set[SeriesKey]) -> None:
        missing = keys - self._ids.keys()
        if not missing:
            return
        targets = sorted({k[0] for k in missing})
        async with engine.begin() as conn:
            await self._load(conn, targets)
            missing -= self._ids.keys()
            if missing:
                rows = [{"target": t, "metric": m, "labels": lb} for t, m, lb in sorted(missing)]
                await conn.execute(self._insert_ignore(), rows)
                await self._load(conn, targets)
        lost = missing - self._ids.keys()
        if lost:
            raise RuntimeError(f"{len(lost)} series could not be created, e.g. {sorted(lost)[0]}")

    async def _load(self, conn: AsyncConnection, targets: list[str]) -> None:
        stmt = select(series.c.id, series.c.target, series.c.metric, series.c.labels).where(
            series.c.target.in_(targets)
        )
        for row in await conn.execute(stmt):
            self._ids[(row.target, row.metric, row.labels)] = int(row.id)

    def _insert_ignore(self):  # type: ignore[no-untyped-def]
        if self.dialect == "sqlite":
            return sqlite.insert(series).on_conflict_do_nothing()
        if self.dialect == "postgresql":
            return postgresql.insert(series).on_conflict_do_nothing()
        return insert(series).prefix_with("IGNORE")

    async def insert(
        self, conn: AsyncConnection, rows: list[SampleRow], *, open_transaction: bool = False
    ) -> None:
        """Insert the rows inside the connection's transaction (raises on a duplicate (series_id, ts)).

        On PostgreSQL the COPY joins the transaction only once a statement through SQLAlchemy has
        opened it (asyncpg's own would commit at once): `open_transaction` opens it first.
        """
        if not rows:
            return
        if self.dialect == "sqlite":
            raw = await conn.get_raw_connection()
            await raw.driver_connection.executemany(INSERT_SQL, rows)  # type: ignore[union-attr]
        elif self.dialect == "postgresql":
            if open_transaction:
                await conn.exec_driver_sql("SELECT 1")
            raw = await conn.get_raw_connection()
            await raw.driver_connection.copy_records_to_table(  # type: ignore[union-attr]
                "samples", records=rows, columns=SAMPLE_COLUMNS
            )
        else:
            await conn.execute(insert(samples), [dict(zip(SAMPLE_COLUMNS, r, strict=True)) for r in rows])
