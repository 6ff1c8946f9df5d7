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
from itertools import compress, repeat
from operator import is_not

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


@dataclass(slots=True)
class _Layout:
    """A poll's samples as last written for one target: their series ids in order, and the
    values stored for them (a non-finite value as None)."""

    samples: tuple[Sample, ...]
    ids: list[int]
    values: list[float | None]


def _stored(value: float | None) -> float | None:
    if value is not None and (value.__class__ is not float or not math.isfinite(value)):
        return float(value) if math.isfinite(value) else None
    return value


def _values_if_same(samples: Sequence[Sample], layout: _Layout) -> list[float | None] | None:
    """The values to store for `samples` if they are the layout's series in its order, else None.

    A sample that is the very object of the layout (collectors reuse an unchanged series' Sample,
    and Samples are never changed once made) keeps its stored value; only the others (found
    without a Python loop over all of them) are compared by metric and labels."""
    was = layout.samples
    values = layout.values.copy()
    isfinite = math.isfinite
    for i in compress(range(len(was)), map(is_not, samples, was)):
        s, old = samples[i], was[i]
        if s.metric != old.metric or s.labels != old.labels:
            return None
        value = s.value
        if value is not None and (value.__class__ is not float or not isfinite(value)):
            value = float(value) if isfinite(value) else None
        values[i] = value
    return values


class SampleIngest:
    """Sample rows of polls and their bulk insert, for one dialect.

    Series ids come from an in-process cache, so a sample costs a dict lookup rather than a query.
    New series are inserted (insert-or-ignore, so another process inserting the same series at
    once is harmless) and committed before the samples that use them: an id cached here is never
    one a rolled-back transaction handed out.

    A target's poll mostly sends the series of one of its earlier polls in the same order (an
    idle server's every poll; slower sources add theirs on some polls): per target and number of
    samples the last layout is kept, and a poll that matches it takes its ids without a lookup.
    """

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        # Per target (so forgetting one is one pop): (metric, canonical labels) -> series id.
        self._ids: dict[str, dict[tuple[str, str], int]] = {}
        # Per target, what a sample is looked up by without encoding the canonical key: the metric
        # alone for unlabeled samples (most of them), else the metric and the labels' items in the
        # order the collector built them.
        self._plain: dict[str, dict[str, int]] = {}
        self._labeled: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], int]] = {}
        # Per target, by number of samples: the layout last written.
        self._layouts: dict[str, dict[int, _Layout]] = {}

    def forget(self, target: str) -> None:
        """Drop the target's series ids and layouts (it is no longer polled here); they are read
        from the store again if it comes back."""
        self._plain.pop(target, None)
        self._labeled.pop(target, None)
        self._layouts.pop(target, None)
        self._ids.pop(target, None)

    async def rows(self, engine: AsyncEngine, polls: Iterable[Poll]) -> list[SampleRow]:
        """The (series_id, ts, value) rows of the polls' samples, non-finite values as NULL."""
        out: list[SampleRow] = []
        unknown = [poll for poll in polls if not self._add_rows(poll, out)]
        if unknown:
            await self._resolve(
                engine,
                {
                    (poll.info.name, s.metric, canonical_labels(s.labels))
                    for poll in unknown
                    for s in poll.samples
                },
            )
            for poll in unknown:
                self._learn(poll.info.name, poll.samples)
                if not self._add_rows(poll, out):
                    raise RuntimeError(f"target {poll.info.name}: series ids missing after creating them")
        return out

    def _add_rows(self, poll: Poll, out: list[SampleRow]) -> bool:
        """Append the poll's rows; False (nothing appended) when one of its series has no id yet."""
        target, samples = poll.info.name, poll.samples
        layouts = self._layouts.get(target)
        if layouts is None:
            layouts = self._layouts[target] = {}
        layout = layouts.get(len(samples))
        values = _values_if_same(samples, layout) if layout is not None else None
        if layout is not None and values is not None:
            layout.samples, layout.values = tuple(samples), values
        else:
            ids = self._lookup(target, samples)
            if ids is None:
                return False
            layout = layouts[len(samples)] = _Layout(tuple(samples), ids, [_stored(s.value) for s in samples])
        out.extend(zip(layout.ids, repeat(float(poll.ts)), layout.values))
        return True

    def _lookup(self, target: str, samples: Sequence[Sample]) -> list[int] | None:
        """The series ids of the samples from the per-target caches, or None if one is unknown."""
        plain = self._plain.get(target)
        if plain is None:
            plain = self._plain[target] = {}
            self._labeled[target] = {}
        plain_id, labeled_id = plain.get, self._labeled[target].get
        ids: list[int] = []
        for s in samples:
            labels = s.labels
            sid = labeled_id((s.metric, tuple(labels.items()))) if labels else plain_id(s.metric)
            if sid is None:
                return None
            ids.append(sid)
        return ids

    def _learn(self, target: str, samples: Sequence[Sample]) -> None:
        """Put the samples' resolved ids in the target's lookup caches."""
        # setdefault: a forget(target) while the ids were read (an await) must not fail the batch.
        ids = self._ids.get(target, {})
        plain, labeled = self._plain.setdefault(target, {}), self._labeled.setdefault(target, {})
        for s in samples:
            sid = ids.get((s.metric, canonical_labels(s.labels)))
            if sid is None:
                continue
            if s.labels:
                labeled[(s.metric, tuple(s.labels.items()))] = sid
            else:
                plain[s.metric] = sid

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
