"""Cross-source values of one poll, as functions over its typed record (outputs.PollOutputs).

Stall verdicts, retired groups, rates per group, the session join, threads, throughput, cache
ratios and the pool and target summaries. Each per-target memory (stall progress, ratio windows,
who each session is, the last statements) is passed in explicitly; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from poolscope.analysis.flight_recorder import FlightRecorder
from poolscope.analysis.held_time import METRICS as HELD_TIME_METRICS
from poolscope.analysis.held_time import HeldTime
from poolscope.analysis.holders import HolderInputs, derive_holders
from poolscope.analysis.last_statement import LastStatementMemory
from poolscope.analysis.ratios import CacheRatios
from poolscope.analysis.session_identity import SessionIdentities
from poolscope.analysis.stalls import StallDetector
from poolscope.flavors import flavor_spec
from poolscope.metrics import Metric
from poolscope.poller.collectors.base import sample
from poolscope.poller.collectors.global_status import StatusSection
from poolscope.poller.collectors.innodb_trx import MIN_LISTED_AGE_S
from poolscope.poller.collectors.processlist import ProcesslistSection
from poolscope.poller.collectors.thread_pool_stats import GroupCounters
from poolscope.poller.discovery import capabilities
from poolscope.poller.outputs import PollOutputs
from poolscope.schemas import (
    GroupState,
    PoolSummary,
    QueuedConnection,
    QueueTimeMode,
    Ratios,
    Sample,
    ServerInfo,
    TargetState,
    TargetSummary,
    Threads,
    Throughput,
    Transactions,
)
from poolscope.values import int_or_none

METRICS = (
    Metric(
        "tp_group_stalled",
        "1 when Poolscope judged the group stalled this poll (any reason, the server's flag included)",
        labels=("group",),
        agg="max",
    ),
    Metric("thread_cache_miss_ratio", "Threads_created / Connections over the ratio window", unit="ratio"),
    Metric(
        "buffer_pool_miss_ratio",
        "Innodb_buffer_pool_reads / _read_requests over the ratio window",
        unit="ratio",
    ),
    *HELD_TIME_METRICS,
)


@dataclass
class TargetMemory:
    """What deriving remembers of one target between polls (forgotten when it goes down)."""

    stalls: StallDetector
    ratios: CacheRatios
    last_statements: LastStatementMemory
    identities: SessionIdentities
    # Who holds the pool is read while a group has a queue or is stalled, and on one poll after:
    # the polls still to read it, and the groups under pressure at the last poll.
    pressure_left: int = 0
    pressured_groups: set[int] = field(default_factory=set)
    held_time: HeldTime = field(default_factory=HeldTime)
    # The last 120 s of holders and queued requests: history, so kept when the target goes down.
    recorder: FlightRecorder = field(default_factory=FlightRecorder)

    def forget(self) -> None:
        self.stalls.forget()
        self.last_statements.forget()
        self.identities.forget()
        self.pressure_left = 0
        self.pressured_groups = set()
        self.held_time.forget()

    @property
    def reads_holders(self) -> bool:
        """This poll reads the holders' sources (Collector.on_pressure): the last one had pressure."""
        return self.pressure_left > 0


def learn_server(server: ServerInfo, outputs: PollOutputs) -> None:
    """What this poll showed of the server that discovery could not know.

    thread_pool_exact_stats is dynamic: the mode the queue times come from can change between
    polls. Percona's statistics and queue depth are status variables that exist from 8.4.10 on:
    the capabilities follow what the server reports, not its version. A MySQL Enterprise pool
    whose tp_* tables were hidden (no grant) becomes readable once a read of them succeeds.
    """
    variables = outputs.global_variables or {}
    if "thread_pool_exact_stats" in variables:
        exact = variables["thread_pool_exact_stats"].upper() == "ON"
        mode: QueueTimeMode = "exact" if exact else "coarse"
        if server.exact_stats is not exact or server.queue_time_mode != mode:  # seen every poll, rarely new
            server.exact_stats = exact
            server.queue_time_mode = mode
    if outputs.percona_threadpool_status is not None:
        server.capabilities = capabilities(server, outputs.percona_threadpool_status.status_names)
    if server.pool_grant_needed is not None and outputs.readable_tables:
        server.pool_grant_needed = None
        server.pool_tables = sorted(set(server.pool_tables) | outputs.readable_tables)
        server.capabilities = capabilities(server)


def stall_limit_ms(server: ServerInfo, variables: dict[str, str]) -> float | None:
    spec = flavor_spec(server)
    # MySQL Enterprise counts thread_pool_stall_limit in 10 ms units (flavors.py).
    return spec.stall_limit_ms(variables) if spec else int_or_none(variables.get("thread_pool_stall_limit"))


def derive_groups(
    outputs: PollOutputs, now: float, limit_ms: float | None, stalls: StallDetector, samples: list[Sample]
) -> list[GroupState]:
    """MariaDB's THREAD_POOL_* or MySQL Enterprise's tp_* tables: the same per-group model,
    with rates, the stall verdict (tp_group_stalled samples) and retired groups."""
    groups = outputs.thread_pool_groups
    if groups is None:
        groups = outputs.mysql_tp_group_state or []
    counters: dict[int, GroupCounters] | None = outputs.thread_pool_stats
    if counters is None:
        mysql_stats = outputs.mysql_tp_group_stats
        counters = dict(mysql_stats.groups) if mysql_stats else {}
    pool_size = int_or_none((outputs.global_variables or {}).get("thread_pool_size"))
    queue_summary = outputs.thread_pool_queue_summary
    for group in groups:
        group_id = group.group_id
        stats = counters.get(group_id)
        reason = stalls.judge(
            group_id,
            now,
            group.queue_length,
            None if stats is None else stats.dequeues,
            None if stats is None else stats.raw["stalls"],
            group.is_stalled,
            limit_ms,
        )
        derived: dict[str, Any] = {}
        if stats is not None:
            rates = stats.rates
            derived = {
                "stalled_query_ratio": stats.stalled_query_ratio,
                "stalls_per_s": rates["stalls"],
                "thread_creations_per_s": rates["thread_creations"],
                "thread_creations_due_to_stall_per_s": rates["thread_creations_due_to_stall"],
                "dequeues_per_s": rates["dequeues"],
                "throttles_per_s": rates["throttles"],
                "wakes_per_s": rates["wakes"],
            }
        derived["stall_reason"] = reason
        derived["stalled"] = reason is not None
        # Shrinking thread_pool_size leaves old groups listed with their connections (§6).
        derived["retired"] = pool_size is not None and group_id >= pool_size
        if queue_summary is not None:
            derived["oldest_queued_ms"] = queue_summary.oldest_ms_by_group.get(group_id)
        for name, value in derived.items():
            setattr(group, name, value)
        samples.append(sample("tp_group_stalled", float(reason is not None), group=str(group_id)))
    return groups


def derive_threads(status: StatusSection) -> Threads:
    values, rates = status.values, status.rates
    return Threads(
        connected=int_or_none(values.get("Threads_connected")),
        running=int_or_none(values.get("Threads_running")),
        cached=int_or_none(values.get("Threads_cached")),
        created_per_s=rates.get("threads_created_per_s"),
        pool_threads=int_or_none(values.get("Threadpool_threads")),
        pool_idle_threads=int_or_none(values.get("Threadpool_idle_threads")),
    )


def derive_throughput(status: StatusSection) -> Throughput:
    rates = status.rates
    return Throughput(
        qps=rates.get("qps"),
        tps=rates.get("tps"),
        connections_per_s=rates.get("connections_per_s"),
        aborted_connects_per_s=rates.get("aborted_connects_per_s"),
        aborted_clients_per_s=rates.get("aborted_clients_per_s"),
    )


def derive_transactions(outputs: PollOutputs) -> Transactions | None:
    summary = outputs.innodb_trx_summary
    if summary is None:
        return None
    return Transactions(
        count=summary.count,
        lock_waits=summary.lock_waits,
        longest_age_s=summary.longest_age_s,
        listed_min_age_s=MIN_LISTED_AGE_S,
        items=outputs.innodb_trx or [],
    )


def referenced_ids(outputs: PollOutputs) -> set[int]:
    """Connection ids this poll must name: the queued ones and the transactions' threads."""
    ids = {e.connection_id for e in outputs.thread_pool_queues or [] if e.connection_id is not None}
    ids.update(t.thread_id for t in outputs.innodb_trx or [] if t.thread_id is not None)
    return ids


def join_sessions(
    queue: list[QueuedConnection] | None,
    transactions: Transactions | None,
    processlist: ProcesslistSection,
    identities: SessionIdentities,
) -> None:
    """Name who is queued and whose transaction it is, from PROCESSLIST (joined here, not in SQL).

    Who (user, host, db) comes from what the poller has learnt of each session, this poll's
    processlist included; a queued connection looks idle until a worker reads its request, so
    its command, time and SQL are there only when it is active this poll.
    """
    for entry in queue or []:
        if entry.connection_id is None:
            continue
        if (known := identities.get(entry.connection_id)) is not None:
            entry.user, entry.host, entry.db = known
        if (session := processlist.by_id.get(entry.connection_id)) is not None:
            entry.command, entry.time_s, entry.state, entry.info = (
                session.command,
                session.time_s,
                session.state,
                session.info,
            )
    for trx in transactions.items if transactions else []:
        if trx.thread_id is None:
            continue
        known = identities.get(trx.thread_id)
        if known is not None:
            trx.user, trx.host, trx.db = known


def derive_state(
    target: str,
    now: float,
    server: ServerInfo,
    outputs: PollOutputs,
    memory: TargetMemory,
    missing_privileges: list[str],
    samples: list[Sample],
) -> TargetState:
    """The target's state for this poll; appends the derived samples (METRICS) to samples."""
    learn_server(server, outputs)
    variables = outputs.global_variables or {}
    limit_ms = stall_limit_ms(server, variables)
    groups = derive_groups(outputs, now, limit_ms, memory.stalls, samples)

    status = outputs.global_status or StatusSection()
    # MySQL Enterprise's plugin reports thread_handling=loaded-dynamically: still a pool.
    regime = "pool-of-threads" if server.pool_enabled else server.thread_handling
    thread_ratio, buffer_ratio = memory.ratios.update(now, status.values, regime)
    samples.append(sample("thread_cache_miss_ratio", thread_ratio.value))
    samples.append(sample("buffer_pool_miss_ratio", buffer_ratio.value))

    queue = outputs.thread_pool_queues
    transactions = derive_transactions(outputs)
    processlist = outputs.processlist or ProcesslistSection()
    join_sessions(queue, transactions, processlist, memory.identities)
    memory.last_statements.observe(processlist.active, now)
    if queue:
        memory.last_statements.annotate(queue, now)
    mysql_stats = outputs.mysql_tp_group_stats
    waits = outputs.thread_pool_waits
    pool = pool_summary(server, outputs, limit_ms, groups)
    queue_summary = outputs.thread_pool_queue_summary
    queued = queue_summary.total if queue_summary else None
    if pool is not None and pool.queue_depth is not None:
        # Percona 8.4.10+: the server's own whole-pool count (no per-connection rows).
        queued = pool.queue_depth.total
    holders_now = _pressured_groups(groups, pool, status.values)
    state = TargetState(
        target=target,
        ts=now,
        status="up",
        groups=list(groups),
        queue=list(queue) if queue else [],
        queued_connections=queued,
        transactions=transactions,
        waits=list(waits if waits is not None else (mysql_stats.waits if mysql_stats else [])),
        sessions=list(processlist.active),
        threads=derive_threads(status),
        throughput=derive_throughput(status),
        ratios=Ratios(thread_cache_miss=thread_ratio, buffer_pool_miss=buffer_ratio),
        variables=dict(variables),
        pool=pool,
        collectors=[],
        missing_privileges=list(missing_privileges),
    )
    if holders_now is not None or memory.reads_holders:
        wanted = (holders_now or set()) | memory.pressured_groups
        state.holders, state.holders_scope, state.holders_notes = derive_holders(
            server,
            int_or_none(variables.get("thread_pool_size")),
            groups,
            wanted,
            holder_inputs(outputs, processlist, transactions),
            memory.identities,
        )
    # Held, stalled and queued seconds per digest (cheap when there is nothing: an idle pool).
    samples.extend(memory.held_time.count(now, state.holders, state.queue if state.holders else []))
    memory.recorder.record(now, state.holders, state.queue)
    memory.pressure_left = 1 if holders_now is not None else max(memory.pressure_left - 1, 0)
    memory.pressured_groups = holders_now or set()
    return state


def _pressured_groups(
    groups: list[GroupState], pool: PoolSummary | None, status: dict[str, float]
) -> set[int] | None:
    """The groups with a queue or a stall at this poll; None when none has. Without per-group data
    (Percona) the whole pool counts: queued requests (8.4.10+), else more statements running than
    there are groups."""
    if groups:
        pressured = {g.group_id for g in groups if g.queue_length > 0 or g.stalled}
        return pressured or None
    if pool is None:
        return None
    if pool.queue_depth is not None and pool.queue_depth.total is not None:
        return set() if pool.queue_depth.total > 0 else None
    running, size = int_or_none(status.get("Threads_running")), pool.size
    return set() if running is not None and size and running > size else None


def holder_inputs(
    outputs: PollOutputs, processlist: ProcesslistSection, transactions: Transactions | None
) -> HolderInputs:
    """The rows of this poll that holders are made of."""
    listed = list(transactions.items) if transactions else []
    thread_states = outputs.mysql_tp_thread_state
    return HolderInputs(
        sessions=processlist.active,
        by_id=processlist.by_id,
        transactions=listed + list(outputs.trx_lookup or []),
        lock_waits=outputs.innodb_lock_waits,
        metadata_locks=outputs.metadata_locks,
        mdl_instrument=outputs.mdl_instrument,
        thread_connections=outputs.thread_lookup or {},
        server_digests=outputs.statement_digests or {},
        busy_threads=thread_states.busy if thread_states else {},
    )


def lookup_ids(outputs: PollOutputs) -> tuple[set[int], set[str]]:
    """What a pressure poll must look up in its second round trip: the performance_schema threads
    its rows named (metadata lock holders and waiters, statement digests, MySQL Enterprise's busy
    pool threads), and the blocking transactions the listing did not hold."""
    threads: set[int] = set(outputs.statement_digests or ())
    locks = outputs.metadata_locks or []
    waited = {lock.object for lock in locks if not lock.granted}
    threads.update(lock.owner_thread_id for lock in locks if lock.object in waited)
    if outputs.mysql_tp_thread_state is not None:
        threads.update(outputs.mysql_tp_thread_state.busy)
    listed = {t.trx_id for t in outputs.innodb_trx or []}
    trx_ids = {blocking for _, blocking in outputs.innodb_lock_waits or [] if blocking not in listed}
    return threads, trx_ids


def target_summary(state: TargetState) -> TargetSummary:
    groups, threads, throughput = state.groups, state.threads, state.throughput
    return TargetSummary(
        queue_length=sum(g.queue_length for g in groups) if groups else None,
        queued_connections=state.queued_connections,
        groups=len(groups) if groups else None,
        stalled_groups=sum(1 for g in groups if g.stalled) if groups else None,
        threads_connected=threads.connected,
        threads_running=threads.running,
        qps=throughput.qps,
        tps=throughput.tps,
        active_transactions=state.transactions.count if state.transactions else None,
        pool_threads=threads.pool_threads,
        pool_idle_threads=threads.pool_idle_threads,
        longest_wait_ms=max(
            (g.oldest_queued_ms for g in groups if g.oldest_queued_ms is not None), default=None
        ),
    )


def pool_summary(
    server: ServerInfo, outputs: PollOutputs, limit_ms: float | None, groups: list[GroupState]
) -> PoolSummary | None:
    """Whole-pool figures; for Percona (no per-group tables) this is all there is of the pool."""
    if not server.pool_enabled:
        return None
    variables = outputs.global_variables or {}
    status = (outputs.global_status or StatusSection()).values
    spec = flavor_spec(server)
    raw_limit = variables.get(spec.stall_limit.name if spec else "thread_pool_stall_limit")
    percona = outputs.percona_threadpool_status
    mysql_stats = outputs.mysql_tp_group_stats
    threads = int_or_none(status.get("Threadpool_threads"))
    if threads is None and groups:
        threads = sum(g.threads for g in groups)
    return PoolSummary(
        kind=server.pool_kind,
        size=int_or_none(variables.get("thread_pool_size")),
        stall_limit_ms=limit_ms,
        stall_limit_raw=None
        if raw_limit is None
        else f"{raw_limit} {spec.stall_limit.unit_label if spec else ''}".strip(),
        threads=threads,
        idle_threads=int_or_none(status.get("Threadpool_idle_threads")),
        high_prio_mode=variables.get("thread_pool_high_prio_mode"),
        high_prio_tickets=variables.get("thread_pool_high_prio_tickets"),
        queue_wait=percona.stats if percona else [],
        queue_depth=percona.queue_depth if percona else None,
        admin_group=mysql_stats.admin if mysql_stats else None,
        thread_states=outputs.mysql_tp_thread_state,
    )
