"""One poll's derived state of a target: groups, queue, transactions, threads, ratios; series."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from poolscope.schemas.target import CollectorStatus, PoolKind, Sample, TargetInfo, TargetStatus

StallReason = Literal["stalls_counter", "no_dequeue", "server_flag"]


class GroupState(BaseModel):
    group_id: int
    connections: int
    threads: int
    active_threads: int
    standby_threads: int
    queue_length: int
    has_listener: bool
    is_stalled: bool
    stalled: bool = False
    stall_reason: StallReason | None = None
    retired: bool = False
    stalls_per_s: float | None = None
    thread_creations_per_s: float | None = None
    thread_creations_due_to_stall_per_s: float | None = None
    dequeues_per_s: float | None = None
    throttles_per_s: float | None = None
    wakes_per_s: float | None = None
    oldest_queued_ms: float | None = None
    # MySQL Enterprise: share of the statements executed since the last poll that stalled.
    stalled_query_ratio: float | None = None
    # MySQL Enterprise: tp_thread_group_state.STALLED_THREAD_COUNT (statements the pool marked stalled).
    stalled_threads: int | None = None


class Session(BaseModel):
    """An active row of PROCESSLIST."""

    id: int
    user: str | None = None
    host: str | None = None
    db: str | None = None
    command: str
    time_s: float | None = None
    state: str | None = None
    info: str | None = None


class QueuedConnection(BaseModel):
    group_id: int
    position: int
    priority: str  # "high" | "low" (MariaDB's queue index 0 / 1)
    connection_id: int | None  # None while a new connection's login waits in the queue
    queueing_time_ms: float
    user: str | None = None
    host: str | None = None
    db: str | None = None
    command: str | None = None
    time_s: float | None = None
    state: str | None = None
    info: str | None = None
    # The queued request itself is unread until a worker dequeues it, so this is the last
    # statement Poolscope saw the connection run, and how long ago.
    last_sql: str | None = None
    last_sql_seen_s_ago: float | None = None


class Transaction(BaseModel):
    trx_id: str
    state: str
    started_at: float | None = None
    age_s: float | None = None
    wait_s: float | None = None
    thread_id: int | None = None
    user: str | None = None
    host: str | None = None
    db: str | None = None
    query: str | None = None
    rows_locked: int | None = None
    rows_modified: int | None = None


class Transactions(BaseModel):
    count: int = 0
    longest_age_s: float | None = None
    lock_waits: int = 0
    # Listed: open at least this long, or waiting for a lock (count and longest cover all).
    listed_min_age_s: float | None = None
    items: list[Transaction] = Field(default_factory=list)


class WaitReason(BaseModel):
    reason: str
    count: int
    per_s: float | None = None


class Threads(BaseModel):
    connected: int | None = None
    running: int | None = None
    cached: int | None = None
    created_per_s: float | None = None
    pool_threads: int | None = None
    pool_idle_threads: int | None = None


class Throughput(BaseModel):
    qps: float | None = None
    tps: float | None = None
    connections_per_s: float | None = None
    aborted_connects_per_s: float | None = None
    aborted_clients_per_s: float | None = None


class QueueWaitStat(BaseModel):
    """Percona 8.4.10+: a string-valued status like "avg: 12.000, …, cnt: 300", parsed.

    avg/min/max/dev/cnt cover every request dequeued since the server started (lifetime, as the
    server reports them); window_avg is the mean wait of the requests dequeued since the previous
    poll, Δ(avg·cnt)/Δcnt, and window_count how many those were (the window spans more polls
    when too few requests were dequeued to tell their mean from avg's 3-decimal rounding).
    """

    name: str
    avg: float | None = None
    min: float | None = None
    max: float | None = None
    dev: float | None = None
    cnt: float | None = None
    window_avg: float | None = None
    window_count: float | None = None
    window_s: float | None = None  # the window's length (one poll, longer on a quiet server)


class QueueDepth(BaseModel):
    """Percona 8.4.10+: requests waiting in the whole pool's queues now (summed over all groups)."""

    normal: int | None = None  # Threadpool_requests_waiting_in_queue
    high: int | None = None  # Threadpool_requests_waiting_in_hp_queue
    # Threadpool_requests_starved_in_queue: normal-priority requests held back while the pool is
    # at thread_pool_oversubscribe (the server's own saturation signal).
    starved: int | None = None

    @property
    def total(self) -> int | None:
        parts = [v for v in (self.normal, self.high) if v is not None]
        return sum(parts) if parts else None


class AdminGroup(BaseModel):
    """MySQL Enterprise 8.0.31+: the Admin thread group (TP_CONNECTION_ADMIN connections)."""

    group_id: int
    queries_per_s: float | None = None
    connections_per_s: float | None = None


class ThreadStates(BaseModel):
    """MySQL Enterprise tp_thread_state summarised over all groups (STATE, MARKED_STALLED: 8.4+)."""

    threads: int = 0
    by_state: dict[str, int] = Field(default_factory=dict)  # STATE -> threads (empty before 8.4)
    by_type: dict[str, int] = Field(default_factory=dict)  # TP_THREAD_TYPE -> threads (8.0.32+)
    marked_stalled: int | None = None  # None: the server has no MARKED_STALLED column
    waiting: dict[str, int] = Field(default_factory=dict)  # WAIT_TYPE (THD_WAIT_*) -> threads


class PoolSummary(BaseModel):
    """Whole-pool figures for flavors without (or besides) per-group data."""

    kind: PoolKind | None = None
    size: int | None = None
    stall_limit_ms: float | None = None
    # As the server spells it, with its unit (MySQL Enterprise: "6 ×10 ms").
    stall_limit_raw: str | None = None
    threads: int | None = None
    idle_threads: int | None = None
    high_prio_mode: str | None = None
    high_prio_tickets: str | None = None
    queue_wait: list[QueueWaitStat] = Field(default_factory=list)
    queue_depth: QueueDepth | None = None
    admin_group: AdminGroup | None = None
    thread_states: ThreadStates | None = None


class Ratio(BaseModel):
    value: float | None = None
    window_s: float | None = None
    regime: str | None = None
    note: str | None = None


class Ratios(BaseModel):
    thread_cache_miss: Ratio = Field(default_factory=Ratio)
    buffer_pool_miss: Ratio = Field(default_factory=Ratio)


class TargetState(BaseModel):
    """Everything one poll saw on one target, after derivation."""

    target: str
    ts: float
    status: TargetStatus
    groups: list[GroupState] = Field(default_factory=list)
    queue: list[QueuedConnection] = Field(default_factory=list)
    # Every queued connection, while `queue` lists at most the 200 longest waiters.
    queued_connections: int | None = None
    transactions: Transactions | None = None
    waits: list[WaitReason] = Field(default_factory=list)
    sessions: list[Session] = Field(default_factory=list)
    threads: Threads = Field(default_factory=Threads)
    throughput: Throughput = Field(default_factory=Throughput)
    ratios: Ratios = Field(default_factory=Ratios)
    variables: dict[str, str] = Field(default_factory=dict)
    pool: PoolSummary | None = None
    collectors: list[CollectorStatus] = Field(default_factory=list)
    missing_privileges: list[str] = Field(default_factory=list)


class PollEvent(BaseModel):
    """What the live channel pushes after each poll."""

    target: str
    ts: float
    target_info: TargetInfo
    state: TargetState | None
    samples: list[Sample]


class SeriesOut(BaseModel):
    metric: str
    labels: dict[str, str]
    points: list[tuple[float, float | None]]


class MetricsOut(BaseModel):
    from_: float = Field(serialization_alias="from")
    to: float
    step_s: float
    resolution: Literal["raw", "rollup"]
    # With resolution "rollup", points before the rollup high-water mark are this far apart
    # (never closer than step_s); the newest minutes after it come from raw samples.
    rollup_step_s: float | None = None
    series: list[SeriesOut]


# --- alerts (issue #3; see docs/API.md "Alerts") -----------------------------------------------
