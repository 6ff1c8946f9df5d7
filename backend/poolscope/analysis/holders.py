"""Who holds the pool: the connections executing in each thread group, what they wait on and who
blocks them. Pure functions over one poll's rows; nothing here does I/O.

Which group a connection is in comes from the server's own rule:

- MariaDB assigns a connection to group `connection id % thread_pool_size` when it connects, and
  moves it to the group that formula gives for a new thread_pool_size only when its current
  request ends (sql/threadpool_generic.cc: get_group_id() `tid % group_count`, the constructor of
  TP_connection_generic, TP_connection_generic::start_io() with fix_group set by set_pool_size(),
  the same in 10.11 and 11.4). Right after thread_pool_size
  changed, a connection still executing is placed by the new size although it runs in its old
  group until its statement ends.
- MySQL Enterprise says it: tp_thread_state (8.0.32+) names each pool thread's TP_GROUP_ID and its
  Performance Schema THREAD_ID, looked up to a connection id in performance_schema.threads.
- Percona Server has no per-group view: holders are listed for the whole pool (scope `server`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from poolscope.analysis.digest import digest_of
from poolscope.analysis.session_identity import SessionIdentities
from poolscope.schemas import Blocker, GroupHolders, GroupState, Holder, ServerInfo, Session, Transaction

MAX_HOLDERS = 50
# PROCESSLIST commands of the server's own threads and replication: not a client holding a worker.
NOT_CLIENT_COMMANDS = frozenset(
    {"Daemon", "Binlog Dump", "Binlog Dump GTID", "Slave_IO", "Slave_SQL", "Slave_worker", "Connect", "Sleep"}
)
MDL_WAIT_STATE = "metadata lock"
MDL_INSTRUMENT = "wait/lock/metadata/sql/mdl"
TURN_ON = (
    f"UPDATE performance_schema.setup_instruments SET ENABLED = 'YES' WHERE NAME = '{MDL_INSTRUMENT}'"
    f" (until a restart; to keep it: performance-schema-instrument='{MDL_INSTRUMENT}=ON' in the config)"
)
MYSQL_WAITS = {"THD_WAIT_ROW_LOCK": "row lock", "THD_WAIT_META_DATA_LOCK": "metadata lock"}


def mariadb_group(connection_id: int, pool_size: int) -> int:
    """MariaDB's rule: get_group_id() in sql/threadpool_generic.cc, `tid % group_count`."""
    return connection_id % pool_size


class MetadataLock(NamedTuple):
    """A row of performance_schema.metadata_locks."""

    object: str  # TYPE schema.name
    lock_type: str
    granted: bool
    owner_thread_id: int


@dataclass
class HolderInputs:
    """What one poll read that holders are made of (analysis sees rows, not collectors)."""

    sessions: Sequence[Session]
    by_id: Mapping[int, Session]
    transactions: Sequence[Transaction]
    lock_waits: Sequence[tuple[str, str]] | None = None
    # performance_schema: metadata locks (object, type, granted, owner thread), the threads'
    # connection ids, the server's digests by thread, MySQL Enterprise's busy pool threads.
    metadata_locks: Sequence[MetadataLock] | None = None
    mdl_instrument: bool | None = None
    thread_connections: Mapping[int, int] = field(default_factory=dict)
    server_digests: Mapping[int, tuple[str, str | None]] = field(default_factory=dict)
    busy_threads: Mapping[int, tuple[int, str | None]] = field(default_factory=dict)


def group_of(
    server: ServerInfo, pool_size: int | None, inputs: HolderInputs
) -> dict[int, tuple[int, str | None]] | None:
    """connection id -> (group, the server's wait) by the server's rule; None: no per-group view."""
    if server.pool_kind == "mysql_enterprise":
        if not inputs.busy_threads:
            return None
        placed = {}
        for thread_id, (group_id, wait) in inputs.busy_threads.items():
            connection_id = inputs.thread_connections.get(thread_id)
            if connection_id is not None:
                placed[connection_id] = (group_id, wait)
        return placed
    if server.pool_kind in (None, "mariadb") and pool_size:
        return {s.id: (mariadb_group(s.id, pool_size), None) for s in inputs.sessions}
    return None


def derive_holders(
    server: ServerInfo,
    pool_size: int | None,
    groups: Sequence[GroupState],
    wanted: set[int] | None,
    inputs: HolderInputs,
    identities: SessionIdentities,
) -> tuple[list[GroupHolders], Literal["group", "server"], list[str]]:
    """The holders of the groups in `wanted` (None: the whole pool), their scope and notes."""
    notes: list[str] = []
    placed = group_of(server, pool_size, inputs)
    trx_by_thread = {t.thread_id: t for t in inputs.transactions if t.thread_id is not None}
    trx_by_id = {t.trx_id: t for t in inputs.transactions}
    digests_by_connection = {
        inputs.thread_connections[t]: d
        for t, d in inputs.server_digests.items()
        if t in inputs.thread_connections
    }
    holders: list[tuple[int | None, Holder]] = []
    for session in inputs.sessions:
        if session.command in NOT_CLIENT_COMMANDS:
            continue
        group_id: int | None = None
        server_wait: str | None = None
        if placed is not None:
            if session.id not in placed:
                continue  # not a pool thread's connection (MySQL Enterprise: not in tp_thread_state)
            group_id, server_wait = placed[session.id]
            if wanted is not None and group_id not in wanted:
                continue
        holder = _holder(session, server_wait, trx_by_thread, digests_by_connection)
        holder.blockers = _blockers(holder, trx_by_thread, trx_by_id, inputs, identities)
        if holder.waits_on == "metadata lock" and not holder.blockers:
            notes.append(_mdl_note(server, inputs))
        holders.append((group_id, holder))
    states = {g.group_id: g for g in groups}
    by_group: dict[int | None, GroupHolders] = {}
    if placed is not None:
        for group_id in sorted(wanted if wanted is not None else states):
            state = states.get(group_id)
            by_group[group_id] = GroupHolders(
                group_id=group_id,
                stalled=bool(state and state.stalled),
                queue_length=state.queue_length if state else None,
            )
    for group_id, holder in holders:
        entry = by_group.setdefault(group_id, GroupHolders(group_id=group_id))
        entry.holders.append(holder)
    for entry in by_group.values():
        entry.holders.sort(key=lambda h: -(h.time_s or 0.0))
        del entry.holders[MAX_HOLDERS:]
    return list(by_group.values()), "group" if placed is not None else "server", sorted(set(notes))


def _holder(
    session: Session,
    server_wait: str | None,
    trx_by_thread: Mapping[int, Transaction],
    digests_by_connection: Mapping[int, tuple[str, str | None]],
) -> Holder:
    holder = Holder(
        connection_id=session.id,
        user=session.user,
        host=session.host,
        db=session.db,
        command=session.command,
        state=session.state,
        time_s=session.time_s,
        info=session.info,
    )
    if (server_digest := digests_by_connection.get(session.id)) is not None:
        holder.digest, holder.digest_text, holder.digest_source = server_digest[0], server_digest[1], "server"
    elif session.info:
        shape = digest_of(session.info)
        holder.digest, holder.digest_text, holder.digest_source = shape.digest, shape.text, "poolscope"
    trx = trx_by_thread.get(session.id)
    state = session.state or ""
    if server_wait is not None:
        holder.waits_on = MYSQL_WAITS.get(server_wait, server_wait)
    elif trx is not None and trx.state == "LOCK WAIT":
        holder.waits_on = "row lock"
    elif MDL_WAIT_STATE in state.lower():
        holder.waits_on = "metadata lock"
    elif state.lower().startswith("waiting"):
        holder.waits_on = state
    return holder


def _blockers(
    holder: Holder,
    trx_by_thread: Mapping[int, Transaction],
    trx_by_id: Mapping[str, Transaction],
    inputs: HolderInputs,
    identities: SessionIdentities,
) -> list[Blocker]:
    found: list[Blocker] = []
    if holder.waits_on == "row lock" and (trx := trx_by_thread.get(holder.connection_id)) is not None:
        for requesting, blocking in inputs.lock_waits or ():
            if requesting != trx.trx_id:
                continue
            blocker = Blocker(kind="row_lock", trx_id=blocking)
            if (other := trx_by_id.get(blocking)) is not None:
                blocker.trx_age_s = other.age_s
                blocker.statement = other.query
                _name(blocker, other.thread_id, inputs, identities)
            found.append(blocker)
    if holder.waits_on == "metadata lock" and inputs.metadata_locks:
        connection = inputs.thread_connections
        waited = {
            obj
            for obj, _, granted, owner in inputs.metadata_locks
            if not granted and connection.get(owner) == holder.connection_id
        }
        for obj, lock_type, granted, owner in inputs.metadata_locks:
            other_id = connection.get(owner)
            if granted and obj in waited and other_id != holder.connection_id:
                blocker = Blocker(kind="metadata_lock", object=obj, lock_type=lock_type)
                _name(blocker, other_id, inputs, identities)
                found.append(blocker)
    return _unique(found)


def _name(
    blocker: Blocker, connection_id: int | None, inputs: HolderInputs, identities: SessionIdentities
) -> None:
    """Who the blocking connection is and what it does now (idle inside its transaction: Sleep)."""
    if connection_id is None:
        return
    blocker.connection_id = connection_id
    if (known := identities.get(connection_id)) is not None:
        blocker.user, blocker.host = known.user, known.host
    session = inputs.by_id.get(connection_id)
    if session is not None:
        blocker.command, blocker.statement = session.command, session.info or blocker.statement
        blocker.user, blocker.host = session.user or blocker.user, session.host or blocker.host
    else:
        blocker.command = "Sleep"


def _unique(blockers: Iterable[Blocker]) -> list[Blocker]:
    seen: dict[tuple[str, int | None, str | None, str | None], Blocker] = {}
    for b in blockers:
        seen.setdefault((b.kind, b.connection_id, b.trx_id, b.object), b)
    return list(seen.values())


def _mdl_note(server: ServerInfo, inputs: HolderInputs) -> str:
    if server.performance_schema is False or (
        server.performance_schema is None and server.flavor == "mariadb"
    ):
        return (
            "A holder waits for a metadata lock; naming who holds it needs the Performance Schema:"
            " performance_schema=ON in the server's config (a restart), with"
            f" performance-schema-instrument='{MDL_INSTRUMENT}=ON'."
        )
    if inputs.mdl_instrument is False:
        return f"A holder waits for a metadata lock; the metadata lock instrument is off: {TURN_ON}."
    return "A holder waits for a metadata lock whose holder performance_schema.metadata_locks does not list."
