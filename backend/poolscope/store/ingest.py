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
# SQLite's samples go to the head table first (store/head.py).
INSERT_SQL = "INSERT INTO samples_head (series_id, ts, value) VALUES (?, ?, ?)"


@dataclass(frozen=True, slots=True)
class Poll:
    """One poll as the store takes it."""

    info: TargetInfo
    state: TargetState | None
    samples: Sequence[Sample]
    ts: float


def canonical_labels(labels: dict[str, str]) -> str:
    return json.dumps(labels, sort_keys=True, separators=(",", ":"))


def _series(sample: Sample) -> tuple[str, str]:
    """(metric, canonical labels JSON): a series' key within its target."""
    return sample.metric, canonical_labels(sample.labels) if sample.labels else "{}"


def _stored(value: float | None) -> float | None:
    """The value as stored: a float, a non-finite one as None."""
    if value is None:
        return None
    return float(value) if math.isfinite(value) else None


class SampleIngest:
    """Sample rows of polls and their bulk insert, for one dialect.

    Series ids come from an in-process cache, so a sample costs a dict lookup rather than a query.
    New series are inserted (insert-or-ignore, so another process inserting the same series at
    once is harmless) and committed before the samples that use them: an id cached here is never
    one a rolled-back transaction handed out.
    """

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        # Per target (so forgetting one is one pop): (metric, canonical labels) -> series id.
        self._ids: dict[str, dict[tuple[str, str], int]] = {}

    def forget(self, target: str) -> None:
        """Drop the target's series ids (it is no longer polled here); they are read from the
        store again if it comes back."""
        self._ids.pop(target, None)

    async def rows(self, engine: AsyncEngine, polls: Iterable[Poll]) -> list[SampleRow]:
        """The (series_id, ts, value) rows of the polls' samples, non-finite values as NULL."""
        out: list[SampleRow] = []
        unknown = [poll for poll in polls if not self._add_rows(poll, out)]
        if unknown:
            await self._resolve(
                engine, {(poll.info.name, *_series(s)) for poll in unknown for s in poll.samples}
            )
            for poll in unknown:
                if not self._add_rows(poll, out):
                    raise RuntimeError(f"target {poll.info.name}: series ids missing after creating them")
        return out

    def _add_rows(self, poll: Poll, out: list[SampleRow]) -> bool:
        """Append the poll's rows; False (nothing appended) when one of its series has no id yet."""
        ids = self._ids.get(poll.info.name, {})
        rows = []
        ts = float(poll.ts)
        for s in poll.samples:
            series_id = ids.get(_series(s))
            if series_id is None:
                return False
            rows.append((series_id, ts, _stored(s.value)))
        out.extend(rows)
        return True

    async def _resolve(self, engine: AsyncEngine, keys: set[SeriesKey]) -> None:
        missing = {k for k in keys if k[1:] not in self._ids.get(k[0], {})}
        if not missing:
            return
        targets = sorted({k[0] for k in missing})
        async with engine.begin() as conn:
            await self._load(conn, targets)
            missing = {k for k in missing if k[1:] not in self._ids.get(k[0], {})}
            if missing:
                rows = [{"target": t, "metric": m, "labels": lb} for t, m, lb in sorted(missing)]
                await conn.execute(self._insert_ignore(), rows)
                await self._load(conn, targets)
        lost = {k for k in missing if k[1:] not in self._ids.get(k[0], {})}
        if lost:
            raise RuntimeError(f"{len(lost)} series could not be created, e.g. {sorted(lost)[0]}")

    async def _load(self, conn: AsyncConnection, targets: list[str]) -> None:
        stmt = select(series.c.id, series.c.target, series.c.metric, series.c.labels).where(
            series.c.target.in_(targets)
        )
        for row in await conn.execute(stmt):
            self._ids.setdefault(row.target, {})[(row.metric, row.labels)] = int(row.id)

    def _insert_ignore(self):  # type: ignore[no-untyped-def]
        if self.dialect == "sqlite":
            return sqlite.insert(series).on_conflict_do_nothing()
        if self.dialect == "postgresql":
            return postgresql.insert(series).on_conflict_do_nothing()
        return insert(series).prefix_with("IGNORE")

    async def insert(
        self, conn: AsyncConnection, rows: list[SampleRow], *, open_transaction: bool = False
    ) -> None:
        """Insert the rows inside the connection's transaction (raises on a duplicate (series_id, ts);
        on SQLite only on one within the head, store/head.py).

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
