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

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.schemas import OverviewRow, Sample, TargetInfo, TargetState
from poolscope.store.tables import LongText, given_or_own, metadata

if TYPE_CHECKING:
    from poolscope.store.ingest import Poll

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
    # The overview row's figures (overview_fields_json), built once per poll by the poller, so
    # GET /api/overview decodes no TargetInfo. NULL in rows written before migration 0008.
    Column("overview", LongText, nullable=True),
    # variables_fingerprint of the state's variables (kept with the state while down), so a reader
    # sees a change without decoding the state (recommend/engine.py). NULL before migration 0011.
    Column("variables_fp", String(32), nullable=True),
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
# The overview row's fields that come from the poll (name, tags and alerts are the API's).
OVERVIEW_EXCLUDE = {"name", "tags", "active_alerts"}
# Written only with a good state: a down poll leaves the last good ones.
STATE_COLUMNS = ("state", "variables_fp")
MAX_IN_LIST = 500
NOTIFY = text("SELECT pg_notify(:channel, :payload)")
# One notification per target written by a batch (PostgreSQL delivers them at commit).
NOTIFY_EACH = text("SELECT pg_notify(:channel, t) FROM unnest(CAST(:names AS TEXT[])) AS t")
# SQLite: one upsert executed for every target of a batch, plain SQL on the driver (building
# and compiling SQLAlchemy statements per row cost more than running them). The sequence is
# evaluated by each row's statement under SQLite's write lock, so it follows commit order. A
# down poll (state NULL) leaves the stored state alone: it stays the last good one.
SQLITE_UPSERT = (
    "INSERT INTO target_latest (target, seq, ts, status, info, samples, state, state_fresh, overview, "
    "variables_fp) VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM target_latest), ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (target) DO UPDATE SET seq = excluded.seq, ts = excluded.ts, "
    "status = excluded.status, info = excluded.info, samples = excluded.samples, "
    "state = coalesce(excluded.state, target_latest.state), state_fresh = excluded.state_fresh, "
    "overview = excluded.overview, "
    "variables_fp = coalesce(excluded.variables_fp, target_latest.variables_fp)"
)


def variables_fingerprint(variables: dict[str, str]) -> str:
    """A short digest of a state's variables: the latest row carries it (`variables_fp`), so a
    reader sees that they changed without decoding the state."""
    text = json.dumps(sorted(variables.items()), separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def overview_fields_json(info: TargetInfo) -> str:
    """The poll's part of the target's OverviewRow, as a JSON object in the row's field order."""
    summary = info.summary
    row = OverviewRow(
        name=info.name,
        status=info.status,
        reason=info.reason,
        last_poll_at=info.last_poll_at,
        pool_enabled=info.server.pool_enabled if info.server else None,
        groups=summary.groups,
        stalled_groups=summary.stalled_groups,
        queue_length=summary.queue_length,
        queued_connections=summary.queued_connections,
        longest_wait_ms=summary.longest_wait_ms,
        threads_connected=summary.threads_connected,
        threads_running=summary.threads_running,
        qps=summary.qps,
    )
    return row.model_dump_json(exclude=OVERVIEW_EXCLUDE)


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


INFO_STATE = select(target_latest.c.info, target_latest.c.state).where(
    target_latest.c.target == bindparam("t")
)


def _row(r: Any) -> LatestRow:
    return LatestRow(r.target, int(r.seq), float(r.ts), r.info, r.samples, r.state, bool(r.state_fresh))


def _only(stmt: Any, targets: Collection[str] | None) -> Any:
    """Rows of these targets: by name up to a few hundred, else all rows (filtered by the caller)."""
    if targets is None or len(targets) > MAX_IN_LIST:
        return stmt
    return stmt.where(target_latest.c.target.in_(list(targets)))


async def _rows_of(conn: AsyncConnection, stmt: Any, targets: Collection[str] | None) -> list[LatestRow]:
    """The statement's rows, of these targets only when given (_only leaves a long list to this filter)."""
    rows = [_row(r) for r in await conn.execute(_only(stmt, targets))]
    if targets is None:
        return rows
    wanted = set(targets)
    return [r for r in rows if r.target in wanted]


class LatestRows:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self.postgres = self.dialect == "postgresql"
        # Rows this process wrote: its own targets are read from memory (decoded, and the info
        # and overview JSON as stored).
        self._mine: dict[str, Latest] = {}
        self._mine_json: dict[str, tuple[str, str]] = {}
        self._mine_fp: dict[str, str] = {}
        self._statements = self._build_statements()
        self._pg_upsert: Any = self._build_pg_upsert() if self.postgres else None

    def forget(self, target: str) -> None:
        """This process no longer writes the target's row (removed, or polled by another member
        now): its reads go to the store, and nothing kept for encoding its polls stays."""
        self._mine.pop(target, None)
        self._mine_json.pop(target, None)
        self._mine_fp.pop(target, None)

    # --- writing -------------------------------------------------------------------------

    async def write(self, conn: AsyncConnection, polls: Sequence[Poll]) -> None:
        """Rewrite the rows of a batch's targets inside its write transaction: one statement for
        all of them on SQLite and PostgreSQL. A target polled twice in one batch gets its newest
        poll (and the newest good state): the batch commits at once, so no reader saw the other."""
        rows: dict[str, dict[str, Any]] = {}
        for poll in polls:
            info, state = poll.info, poll.state
            name = info.name
            info_json = info.model_dump_json()
            state_json = state.model_dump_json() if state is not None else None
            overview = overview_fields_json(info)
            earlier = rows.get(name)
            fingerprint = variables_fingerprint(state.variables) if state is not None else None
            if state_json is None and earlier is not None:
                state_json, fingerprint = earlier["state"], earlier["variables_fp"]
            rows[name] = {
                "t": name,
                "ts": poll.ts,
                "status": info.status,
                "info": info_json,
                "samples": SAMPLES.dump_json(list(poll.samples)).decode(),
                "state": state_json,
                "state_fresh": state is not None,
                "overview": overview,
                "variables_fp": fingerprint,
            }
            previous = self._mine.get(name)
            last_good = state if state is not None else (previous.state if previous else None)
            self._mine[name] = Latest(info, last_good, list(poll.samples))
            self._mine_json[name] = (info_json, overview)
            if fingerprint is not None:
                self._mine_fp[name] = fingerprint
        if not rows:
            return
        if self.dialect == "sqlite":
            raw = await conn.get_raw_connection()
            await raw.driver_connection.executemany(  # type: ignore[union-attr]
                SQLITE_UPSERT,
                [
                    (r["t"], r["ts"], r["status"], r["info"], r["samples"], r["state"])
                    + (int(r["state_fresh"]), r["overview"], r["variables_fp"])
                    for r in rows.values()
                ],
            )
        elif self.postgres:
            # SQLAlchemy here: its first statement opens the transaction the samples' COPY joins.
            await conn.execute(self._pg_upsert, list(rows.values()))
            await conn.execute(NOTIFY_EACH, {"channel": CHANNEL, "names": list(rows)})
        else:
            for params in rows.values():
                await self._write_one(conn, params)

    async def _write_one(self, conn: AsyncConnection, params: dict[str, Any]) -> None:
        """Any other database (MariaDB): update, else insert."""
        with_state = params["state"] is not None
        if not with_state:
            params = {k: v for k, v in params.items() if k not in STATE_COLUMNS}
        update_stmt, insert_stmt = self._statements[with_state]
        if (await conn.execute(update_stmt, params)).rowcount == 0:
            await conn.execute(insert_stmt, params)

    def _build_statements(self) -> dict[bool, tuple[Any, Any]]:
        """Built once, executed with parameters: building a statement per poll costs more than running it."""
        # Evaluated by the UPDATE itself, which holds the write lock: no two writers get one. The
        # derived table is for MySQL/MariaDB, which refuse the updated table in a subquery.
        newest = select((func.coalesce(func.max(target_latest.c.seq), 0) + 1).label("n")).subquery("newest")
        seq = select(newest.c.n).scalar_subquery()
        out = {}
        for with_state in (False, True):
            names = ["ts", "status", "info", "samples", "state_fresh", "overview"]
            values: dict[str, Any] = {
                name: bindparam(name) for name in names + list(STATE_COLUMNS) * with_state
            }
            update_stmt = (
                update(target_latest)
                .where(target_latest.c.target == bindparam("t"))
                .values(seq=seq, **values)
            )
            insert_stmt = insert(target_latest).values(target=bindparam("t"), seq=seq, **values)
            out[with_state] = (update_stmt, insert_stmt)
        return out

    @staticmethod
    def _build_pg_upsert() -> Any:
        names = ["ts", "status", "info", "samples", "state_fresh", "overview", *STATE_COLUMNS]
        stmt = postgresql.insert(target_latest).values(
            target=bindparam("t"), seq=func.nextval(PG_SEQUENCE), **{n: bindparam(n) for n in names}
        )
        changed: dict[str, Any] = {n: stmt.excluded[n] for n in ["seq"] + names}
        for name in STATE_COLUMNS:
            changed[name] = func.coalesce(stmt.excluded[name], target_latest.c[name])
        return stmt.on_conflict_do_update(index_elements=[target_latest.c.target], set_=changed)

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

    async def info_state(
        self, target: str, conn: AsyncConnection | None = None
    ) -> tuple[TargetInfo, TargetState | None] | None:
        """The target's info and last good state, without its samples (which are not decoded);
        `conn`: read on that connection (else on one of its own)."""
        mine = self._mine.get(target)
        if mine is not None:
            return mine.info, mine.state
        async with given_or_own(self.engine, conn) as conn:
            rows = (await conn.execute(INFO_STATE, {"t": target})).all()
        if not rows:
            return None
        info, state = rows[0]
        return TargetInfo.model_validate_json(info), TargetState.model_validate_json(state) if state else None

    async def variables_fps(self, targets: Collection[str]) -> dict[str, str]:
        """The variables_fp of each target whose row has one (one query for all of them)."""
        out = {name: self._mine_fp[name] for name in targets if name in self._mine_fp}
        rest = [name for name in targets if name not in out]
        if rest:
            async with self.engine.connect() as conn:
                out |= await self._column(conn, target_latest.c.variables_fp, rest)
        return out

    async def info_json(self, targets: Collection[str]) -> dict[str, str]:
        """The latest TargetInfo JSON of each target that has a row (one query for all of them),
        as stored: an API answer can be put together from it without decoding each one."""
        out = {name: self._mine_json[name][0] for name in targets if name in self._mine_json}
        rest = [name for name in targets if name not in out]
        if rest:
            async with self.engine.connect() as conn:
                out |= await self._column(conn, target_latest.c.info, rest)
        return out

    async def overview_json(self, targets: Collection[str]) -> dict[str, str]:
        """overview_fields_json of each target that has a row, as the poller stored it (one query)."""
        out = {name: self._mine_json[name][1] for name in targets if name in self._mine_json}
        rest = [name for name in targets if name not in out]
        if rest:
            async with self.engine.connect() as conn:
                stored = await self._column(conn, target_latest.c.overview, rest)
                # Rows from before the overview column: from their info (until their next poll).
                old = [name for name in rest if name not in stored]
                for name, text in (await self._column(conn, target_latest.c.info, old)).items():
                    stored[name] = overview_fields_json(TargetInfo.model_validate_json(text))
            out |= stored
        return out

    async def _column(self, conn: AsyncConnection, column: Any, targets: Collection[str]) -> dict[str, str]:
        """One column of these targets' rows, where it is not NULL."""
        if not targets:
            return {}
        wanted = set(targets)
        stmt = select(target_latest.c.target, column).where(column.is_not(None))
        return {t: v for t, v in await conn.execute(_only(stmt, targets)) if t in wanted}

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
        return await _rows_of(conn, select(*ROW_COLUMNS), targets)

    async def rows_since(
        self,
        conn: AsyncConnection,
        seq: int,
        targets: Collection[str] | None = None,
        up_to: int | None = None,
    ) -> list[LatestRow]:
        """Rows after sequence `seq` (up to `up_to`, when given), of these targets only, when given."""
        stmt = select(*ROW_COLUMNS).where(target_latest.c.seq > seq).order_by(target_latest.c.seq)
        if up_to is not None:
            stmt = stmt.where(target_latest.c.seq <= up_to)
        return await _rows_of(conn, stmt, targets)

    async def latest_seq(self, conn: AsyncConnection) -> int:
        """The newest latest-row sequence (0 when empty)."""
        return int(
            (await conn.execute(select(func.coalesce(func.max(target_latest.c.seq), 0)))).scalar() or 0
        )

    async def high_water(self, conn: AsyncConnection) -> tuple[int, int]:
        """The newest latest-row sequence and alert event sequence (0 when empty)."""
        alerts = (await conn.execute(select(func.coalesce(func.max(live_alert_events.c.seq), 0)))).scalar()
        return await self.latest_seq(conn), int(alerts or 0)

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
