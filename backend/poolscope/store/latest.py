"""Each target's latest poll as one row in the store, so any process can read it.

A poller rewrites its targets' rows every poll (in the poll's write transaction): the target
info, the poll's samples (for /metrics), the last good state, and a sequence number in commit
order that the live feed (store/feed.py) tails. On SQLite the sequence is max(seq) + 1 inside
the write (writers are serialized, so it follows commit order); on PostgreSQL it comes from a
sequence, which does not, so the write also sends NOTIFY with the target's name (delivered at
commit) and readers fetch by name. The row carries JSON exactly as the live channel sends it,
so a reader can frame it without decoding it.

The process that writes a row keeps it in memory too and reads its own targets from there.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    Index,
    Integer,
    String,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.tables import LongText, metadata

# The channel pollers NOTIFY on PostgreSQL; the payload names what changed, never the data.
CHANNEL = "poolscope_live"
ALERTS_PAYLOAD = "!alerts"
PG_SEQUENCE = "target_latest_seq"

target_latest = Table(
    "target_latest",
    metadata,
    Column("target", String(64), primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("ts", Double, nullable=False),
    Column("status", String(16), nullable=False),
    Column("info", LongText, nullable=False),  # TargetInfo JSON
    Column("samples", LongText, nullable=False),  # the poll's samples, JSON list
    Column("state", LongText, nullable=True),  # the last good TargetState JSON (kept while down)
    Column("state_fresh", Boolean, nullable=False),  # the state is this poll's (the target is up)
    Index("ix_target_latest_seq", "seq"),
)

# Alert changes for the live channels of other processes; pruned by age (store/feed.py).
live_alert_events = Table(
    "live_alert_events",
    metadata,
    Column("seq", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("ts", Double, nullable=False),
    Column("target", String(64), nullable=False),
    Column("data", LongText, nullable=False),  # AlertEvent JSON
)

SAMPLES = TypeAdapter(list[Sample])
MAX_IN_LIST = 500
NOTIFY = text("SELECT pg_notify(:channel, :payload)")


@dataclass(frozen=True)
class Latest:
    info: TargetInfo
    state: TargetState | None  # the last successful poll's, also while the target is down
    samples: list[Sample]  # the last poll's (a down poll's are only target_up)


@dataclass(frozen=True)
class LatestRow:
    """A stored row as the live feed reads it: JSON text, not decoded."""

    target: str
    seq: int
    ts: float
    info: str
    samples: str
    state: str | None
    state_fresh: bool

    def poll_frame_json(self) -> bytes:
        """The PollEvent JSON (api/live.py's `poll` event), put together from the stored parts."""
        state = self.state if self.state_fresh and self.state is not None else "null"
        return (
            f'{{"target":{json.dumps(self.target)},"ts":{self.ts!r},"target_info":{self.info},'
            f'"state":{state},"samples":{self.samples}}}'
        ).encode()

    def decode(self) -> Latest:
        return Latest(
            TargetInfo.model_validate_json(self.info),
            TargetState.model_validate_json(self.state) if self.state else None,
            SAMPLES.validate_json(self.samples),
        )


ROW_COLUMNS = (
    target_latest.c.target,
    target_latest.c.seq,
    target_latest.c.ts,
    target_latest.c.info,
    target_latest.c.samples,
    target_latest.c.state,
    target_latest.c.state_fresh,
)


def _row(r: Any) -> LatestRow:
    return LatestRow(r.target, int(r.seq), float(r.ts), r.info, r.samples, r.state, bool(r.state_fresh))


def _only(stmt: Any, targets: Collection[str] | None) -> Any:
    """Rows of these targets: by name up to a few hundred, else all rows (filtered by the caller)."""
    if targets is None or len(targets) > MAX_IN_LIST:
        return stmt
    return stmt.where(target_latest.c.target.in_(list(targets)))


class LatestRows:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.postgres = engine.dialect.name == "postgresql"
        # Rows this process wrote: its own targets are read from memory.
        self._mine: dict[str, Latest] = {}
        self._statements = self._build_statements()

    # --- writing -------------------------------------------------------------------------

    async def write(
        self,
        conn: AsyncConnection,
        info: TargetInfo,
        state: TargetState | None,
        poll_samples: Sequence[Sample],
        ts: float,
    ) -> None:
        """Rewrite the target's row inside the poll's write transaction."""
        params: dict[str, Any] = {
            "t": info.name,
            "ts": ts,
            "status": info.status,
            "info": info.model_dump_json(),
            "samples": SAMPLES.dump_json(list(poll_samples)).decode(),
            "state_fresh": state is not None,
        }
        if state is not None:
            params["state"] = state.model_dump_json()
        # A down poll leaves the stored state alone: it stays the last good one.
        update_stmt, insert_stmt = self._statements[state is not None]
        if self.postgres:
            # The NOTIFY rides on the write itself (RETURNING pg_notify): no extra round trip.
            if not (await conn.execute(update_stmt, params)).fetchall():
                await conn.execute(insert_stmt, params)
        elif (await conn.execute(update_stmt, params)).rowcount == 0:
            await conn.execute(insert_stmt, params)
        previous = self._mine.get(info.name)
        last_good = state if state is not None else (previous.state if previous else None)
        self._mine[info.name] = Latest(info, last_good, list(poll_samples))

    def _build_statements(self) -> dict[bool, tuple[Any, Any]]:
        """Built once, executed with parameters: building a statement per poll costs more than running it."""
        if self.postgres:
            seq: Any = func.nextval(PG_SEQUENCE)
        else:
            # Evaluated by the UPDATE itself, which holds SQLite's write lock: no two writers get
            # one. The derived table is for MySQL/MariaDB, which refuse the updated table in a subquery.
            newest = select((func.coalesce(func.max(target_latest.c.seq), 0) + 1).label("n")).subquery(
                "newest"
            )
            seq = select(newest.c.n).scalar_subquery()
        out = {}
        for with_state in (False, True):
            names = ["ts", "status", "info", "samples", "state_fresh"] + (["state"] if with_state else [])
            values: dict[str, Any] = {name: bindparam(name) for name in names}
            update_stmt = (
                update(target_latest)
                .where(target_latest.c.target == bindparam("t"))
                .values(seq=seq, **values)
            )
            insert_stmt = insert(target_latest).values(target=bindparam("t"), seq=seq, **values)
            if self.postgres:
                notify = func.pg_notify(CHANNEL, target_latest.c.target)
                update_stmt, insert_stmt = update_stmt.returning(notify), insert_stmt.returning(notify)
            out[with_state] = (update_stmt, insert_stmt)
        return out

    async def write_alert_event(
        self, target: str, ts: float, data: str, keep_after: float | None = None
    ) -> None:
        """Log one alert change for other processes' live channels; drop events older than keep_after."""
        async with self.engine.begin() as conn:
            if keep_after is not None:
                await conn.execute(delete(live_alert_events).where(live_alert_events.c.ts < keep_after))
            await conn.execute(insert(live_alert_events).values(target=target, ts=ts, data=data))
            if self.postgres:
                await conn.execute(NOTIFY, {"channel": CHANNEL, "payload": ALERTS_PAYLOAD})

    # --- reading -------------------------------------------------------------------------

    async def get(self, target: str) -> Latest | None:
        mine = self._mine.get(target)
        if mine is not None:
            return mine
        async with self.engine.connect() as conn:
            rows = await self.rows_for(conn, [target])
        return rows[0].decode() if rows else None

    async def info_json(self, targets: Collection[str]) -> dict[str, str]:
        """The latest TargetInfo JSON of each target that has a row (one query for all of them),
        as stored: an API answer can be put together from it without decoding each one."""
        out = {name: self._mine[name].info.model_dump_json() for name in targets if name in self._mine}
        rest = [name for name in targets if name not in out]
        if rest:
            wanted = set(rest)
            stmt = select(target_latest.c.target, target_latest.c.info)
            async with self.engine.connect() as conn:
                for r in await conn.execute(_only(stmt, rest)):
                    if r.target in wanted:
                        out[r.target] = r.info
        return out

    async def infos(self, targets: Collection[str]) -> dict[str, TargetInfo]:
        """The latest TargetInfo of each target that has a row."""
        mine = {name: self._mine[name].info for name in targets if name in self._mine}
        rest = [name for name in targets if name not in mine]
        stored = await self.info_json(rest) if rest else {}
        return mine | {name: TargetInfo.model_validate_json(text) for name, text in stored.items()}

    async def many(self, targets: Collection[str]) -> dict[str, Latest]:
        """Info, state and samples of each target that has a row."""
        out = {name: self._mine[name] for name in targets if name in self._mine}
        rest = [name for name in targets if name not in out]
        if rest:
            async with self.engine.connect() as conn:
                for row in await self.rows_for(conn, rest):
                    out[row.target] = row.decode()
        return out

    async def rows_for(self, conn: AsyncConnection, targets: Collection[str] | None) -> list[LatestRow]:
        rows = [_row(r) for r in await conn.execute(_only(select(*ROW_COLUMNS), targets))]
        if targets is None:
            return rows
        wanted = set(targets)
        return [r for r in rows if r.target in wanted]

    async def rows_since(self, conn: AsyncConnection, seq: int) -> list[LatestRow]:
        stmt = select(*ROW_COLUMNS).where(target_latest.c.seq > seq).order_by(target_latest.c.seq)
        return [_row(r) for r in await conn.execute(stmt)]

    async def high_water(self, conn: AsyncConnection) -> tuple[int, int]:
        """The newest latest-row sequence and alert event sequence (0 when empty)."""
        latest = (await conn.execute(select(func.coalesce(func.max(target_latest.c.seq), 0)))).scalar()
        alerts = (await conn.execute(select(func.coalesce(func.max(live_alert_events.c.seq), 0)))).scalar()
        return int(latest or 0), int(alerts or 0)

    async def alert_events_after(self, ts: float) -> list[str]:
        """The logged AlertEvent JSON since ts, oldest first."""
        stmt = (
            select(live_alert_events.c.data)
            .where(live_alert_events.c.ts >= ts)
            .order_by(live_alert_events.c.seq)
        )
        async with self.engine.connect() as conn:
            return [r.data for r in await conn.execute(stmt)]

    async def alert_events_since(self, conn: AsyncConnection, seq: int) -> list[tuple[int, str, str]]:
        stmt = (
            select(live_alert_events.c.seq, live_alert_events.c.target, live_alert_events.c.data)
            .where(live_alert_events.c.seq > seq)
            .order_by(live_alert_events.c.seq)
        )
        return [(int(r.seq), r.target, r.data) for r in await conn.execute(stmt)]
