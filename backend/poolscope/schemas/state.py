"""One poll's derived state of a target: groups, queue, transactions, threads, ratios; series."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from poolscope.schemas.base import Schema
from poolscope.schemas.target import CollectorStatus, PoolKind, Sample, TargetInfo, TargetStatus

StallReason = Literal["stalls_counter", "no_dequeue", "server_flag"]


class GroupState(Schema):
    """One thread group of the pool at this poll (MariaDB THREAD_POOL_GROUPS, MySQL Enterprise
    tp_thread_group_state), with its rates and Poolscope's stall verdict."""

    group_id: int
    """The group's number (GROUP_ID), from 0."""
    connections: int
    """Client connections assigned to the group."""
    threads: int
    """Worker threads of the group, busy or not."""
    active_threads: int
    """Workers running a statement now."""
    standby_threads: int
    """Idle workers kept for reuse (MySQL Enterprise: consumer + reserve threads)."""
    queue_length: int
    """Requests waiting in the group's queue (MySQL Enterprise: queued queries + transactions).
    A lower bound: requests not yet taken from the network are not counted."""
    has_listener: bool
    """The group has a listener thread waiting for network events."""
    is_stalled: bool
    """The server's own instantaneous IS_STALLED flag; set for an instant, so rarely seen
    (`stalled` is the verdict to read)."""
    stalled: bool = False
    """Poolscope's verdict: the group stalled since the last poll."""
    stall_reason: StallReason | None = None
    """Why `stalled`: `stalls_counter` (the STALLS counter rose), `no_dequeue` (a non-empty queue
    had no dequeue for longer than the stall limit) or `server_flag` (IS_STALLED seen); null when
    not stalled."""
    retired: bool = False
    """The group's number is at or above @@thread_pool_size: left over after the pool shrank,
    listed because its connections still live there."""
    stalls_per_s: float | None = None
    """STALLS counter rate, per second since the last poll (null on the first poll or after a
    reset)."""
    thread_creations_per_s: float | None = None
    """THREAD_CREATIONS rate: new workers per second."""
    thread_creations_due_to_stall_per_s: float | None = None
    """THREAD_CREATIONS_DUE_TO_STALL rate: workers added per second because the group stalled."""
    dequeues_per_s: float | None = None
    """Requests taken from the queue per second, by the listener and by workers (MySQL Enterprise:
    statements executed per second)."""
    throttles_per_s: float | None = None
    """THROTTLES rate: times per second the creation of a new worker was throttled (delayed)."""
    wakes_per_s: float | None = None
    """WAKES rate: idle workers woken per second."""
    oldest_queued_ms: float | None = None
    """How long the group's oldest queued request has waited, in ms; null when its queue is
    empty."""
    stalled_query_ratio: float | None = None
    """MySQL Enterprise: share (0..1) of the statements executed since the last poll that stalled."""
    stalled_threads: int | None = None
    """MySQL Enterprise: tp_thread_group_state.STALLED_THREAD_COUNT, statements the pool marked
    stalled."""


class Session(Schema):
    """An active row of PROCESSLIST (a session running a statement, not Sleep)."""

    id: int
    """The connection id (PROCESSLIST.ID)."""
    user: str | None = None
    """The session's user."""
    host: str | None = None
    """The client's host:port."""
    db: str | None = None
    """The default database, if any."""
    command: str
    """PROCESSLIST.COMMAND (Query, Execute, ...)."""
    time_s: float | None = None
    """Seconds in the current command: whole seconds from SHOW FULL PROCESSLIST, millisecond steps
    from information_schema.PROCESSLIST (used above 300 connections)."""
    state: str | None = None
    """PROCESSLIST.STATE, what the statement is doing."""
    info: str | None = None
    """The statement's text, cut to 2,048 characters."""


class QueuedConnection(Schema):
    """A request waiting in a thread group's queue, with who sent it."""

    group_id: int
    """The group whose queue holds it."""
    position: int
    """Its place in the queue (POSITION)."""
    priority: str
    """`high` or `low`: which of the group's two queues (MariaDB's index 0 / 1)."""
    connection_id: int | None
    """The connection's id; null while a new connection's login waits in the queue."""
    queueing_time_ms: float
    """How long it has waited, in ms (coarse unless thread_pool_exact_stats is ON: see the
    server's `queue_time_mode`)."""
    user: str | None = None
    """The connection's user, from its last sighting in the processlist or a lookup by id."""
    host: str | None = None
    """The client's host:port, likewise."""
    db: str | None = None
    """The connection's default database, likewise."""
    command: str | None = None
    """PROCESSLIST.COMMAND, only when the session is active this poll (a queued one shows Sleep)."""
    time_s: float | None = None
    """Seconds in that command, only when active this poll."""
    state: str | None = None
    """PROCESSLIST.STATE, only when active this poll."""
    info: str | None = None
    """PROCESSLIST.INFO, only when active this poll."""
    last_sql: str | None = None
    """The last statement Poolscope saw this connection run. The queued request itself is unread
    until a worker dequeues it, so its SQL cannot be known."""
    last_sql_seen_s_ago: float | None = None
    """How many seconds ago `last_sql` was seen."""


class Transaction(Schema):
    """An open InnoDB transaction (INNODB_TRX), listed when open ≥ 1 s or waiting for a lock."""

    trx_id: str
    """InnoDB's transaction id."""
    state: str
    """trx_state: RUNNING, LOCK WAIT, ROLLING BACK or COMMITTING."""
    started_at: float | None = None
    """When it started, Unix time in seconds."""
    age_s: float | None = None
    """Seconds since it started."""
    wait_s: float | None = None
    """Seconds it has waited for a lock; null when not waiting."""
    thread_id: int | None = None
    """The connection running it (PROCESSLIST.ID)."""
    user: str | None = None
    """That connection's user, when known."""
    host: str | None = None
    """That connection's client host:port, when known."""
    db: str | None = None
    """That connection's default database, when known."""
    query: str | None = None
    """The statement it runs now (trx_query); null between statements."""
    rows_locked: int | None = None
    """Rows it holds locks on (approximate, as InnoDB reports)."""
    rows_modified: int | None = None
    """Rows it inserted, updated or deleted."""


class Transactions(Schema):
    """Open transactions: counts over all of them, and the listed ones."""

    count: int = 0
    """Open transactions, all of them."""
    longest_age_s: float | None = None
    """Age of the oldest open transaction, in s; null when none is open."""
    lock_waits: int = 0
    """Transactions waiting for a lock (LOCK WAIT), all of them."""
    listed_min_age_s: float | None = None
    """`items` lists transactions open at least this long, or waiting for a lock."""
    items: list[Transaction] = Field(default_factory=list)
    """The listed transactions, oldest first, at most 50."""


class Blocker(Schema):
    """Who holds what a holder waits for: the transaction holding its row lock, or a session
    holding the metadata lock it waits for."""

    kind: Literal["row_lock", "metadata_lock"]
    """`row_lock` (INNODB_LOCK_WAITS on MariaDB, performance_schema.data_lock_waits on MySQL 8) or
    `metadata_lock` (performance_schema.metadata_locks)."""
    connection_id: int | None = None
    """The blocking connection (PROCESSLIST.ID), when the server names it."""
    user: str | None = None
    """Its user, when known."""
    host: str | None = None
    """Its client host:port, when known."""
    trx_id: str | None = None
    """Row locks: the blocking InnoDB transaction."""
    trx_age_s: float | None = None
    """Row locks: how long the blocking transaction has been open, in s."""
    command: str | None = None
    """What the blocking connection does now (Query, Sleep: idle inside its open transaction)."""
    statement: str | None = None
    """The statement it runs now (null when it sits idle inside its transaction)."""
    object: str | None = None
    """Metadata locks: the object (schema.table) the lock is on."""
    lock_type: str | None = None
    """Metadata locks: the type of lock it holds (SHARED_READ, EXCLUSIVE, ...)."""


class Holder(Schema):
    """A connection executing in a thread group: it holds one of the group's workers."""

    connection_id: int
    """The connection (PROCESSLIST.ID)."""
    user: str | None = None
    """Its user."""
    host: str | None = None
    """Its client host:port."""
    db: str | None = None
    """Its default database."""
    command: str
    """PROCESSLIST.COMMAND (Query, Execute, ...)."""
    state: str | None = None
    """PROCESSLIST.STATE: what the statement is doing."""
    time_s: float | None = None
    """Seconds in the current statement."""
    info: str | None = None
    """The statement (cut to 2,048 characters; literals replaced in snapshots when
    redact_sql_literals is set)."""
    digest: str | None = None
    """The statement's digest: the server's own (performance_schema) where it has one, else
    Poolscope's normalisation (see `digest_source`)."""
    digest_text: str | None = None
    """The statement with its literals replaced: the shape the digest stands for."""
    digest_source: Literal["server", "poolscope"] | None = None
    """`server`: performance_schema.events_statements_current.DIGEST; `poolscope`: normalised with
    sqlglot's MySQL tokenizer."""
    waits_on: str | None = None
    """What it waits on, when the server says: `row lock`, `metadata lock`, or the server's wait
    (MySQL Enterprise tp_thread_state.WAIT_TYPE, or PROCESSLIST.STATE's waiting states)."""
    blockers: list[Blocker] = Field(default_factory=list)
    """Who holds what it waits on."""


class GroupHolders(Schema):
    """The connections executing in one thread group (or the whole pool, where the server has no
    per-group view) while a group has a queue or is stalled."""

    group_id: int | None
    """The thread group; null: the whole pool (Percona has no per-group view)."""
    stalled: bool = False
    """The group is stalled at this poll (GroupState.stalled)."""
    queue_length: int | None = None
    """Requests in its queue."""
    holders: list[Holder] = Field(default_factory=list)
    """Its executing connections, longest running first (at most 50)."""


class WaitReason(Schema):
    """Why the pool's workers waited (THREAD_POOL_WAITS; MySQL Enterprise: the *_WAITS columns)."""

    reason: str
    """The wait reason: ROW_LOCK, DISKIO, NET, ... (MySQL Enterprise says FSYNC where MariaDB says
    SYNC)."""
    count: int
    """Waits of that kind since the server started (or the last FLUSH THREAD_POOL_WAITS)."""
    per_s: float | None = None
    """Waits of that kind per second since the last poll."""


class Threads(Schema):
    """The server's thread counts (SHOW GLOBAL STATUS)."""

    connected: int | None = None
    """Threads_connected: open client connections."""
    running: int | None = None
    """Threads_running: threads running a statement now."""
    cached: int | None = None
    """Threads_cached: idle threads in the thread cache."""
    created_per_s: float | None = None
    """Threads_created rate, per second."""
    pool_threads: int | None = None
    """Threadpool_threads: the pool's worker threads (MariaDB, Percona)."""
    pool_idle_threads: int | None = None
    """Threadpool_idle_threads: the pool's idle workers (MariaDB, Percona)."""


class Throughput(Schema):
    """Rates per second since the last poll (SHOW GLOBAL STATUS counters)."""

    qps: float | None = None
    """Questions per second, less Poolscope's own statements."""
    tps: float | None = None
    """Commits plus rollbacks per second (Com_commit + Com_rollback)."""
    connections_per_s: float | None = None
    """Connection attempts per second (Connections)."""
    aborted_connects_per_s: float | None = None
    """Failed connection attempts per second (Aborted_connects)."""
    aborted_clients_per_s: float | None = None
    """Connections dropped without a proper close, per second (Aborted_clients)."""


class QueueWaitStat(Schema):
    """Percona 8.4.10+: a string-valued status like "avg: 12.000, …, cnt: 300", parsed.

    avg/min/max/dev/cnt cover every request dequeued since the server started (lifetime, as the
    server reports them); window_avg is the mean wait of the requests dequeued since the previous
    poll, Δ(avg·cnt)/Δcnt, and window_count how many those were (the window spans more polls
    when too few requests were dequeued to tell their mean from avg's 3-decimal rounding).
    """

    name: str
    """The status variable, e.g. Threadpool_average_queue_wait_us."""
    avg: float | None = None
    """Mean wait since the server started, in µs."""
    min: float | None = None
    """Shortest wait since the server started, in µs."""
    max: float | None = None
    """Longest wait since the server started, in µs."""
    dev: float | None = None
    """Standard deviation of the waits since the server started, in µs."""
    cnt: float | None = None
    """Requests dequeued since the server started."""
    window_avg: float | None = None
    """Mean wait of the requests dequeued in the window, in µs."""
    window_count: float | None = None
    """Requests dequeued in the window."""
    window_s: float | None = None
    """The window's length in s: one poll, longer on a quiet server."""


class QueueDepth(Schema):
    """Percona 8.4.10+: requests waiting in the whole pool's queues now (summed over all groups)."""

    normal: int | None = None
    """Threadpool_requests_waiting_in_queue: requests in the normal-priority queues."""
    high: int | None = None
    """Threadpool_requests_waiting_in_hp_queue: requests in the high-priority queues."""
    starved: int | None = None
    """Threadpool_requests_starved_in_queue: normal-priority requests held back while the pool is
    at thread_pool_oversubscribe (the server's own saturation signal)."""

    @property
    def total(self) -> int | None:
        parts = [v for v in (self.normal, self.high) if v is not None]
        return sum(parts) if parts else None


class AdminGroup(Schema):
    """MySQL Enterprise 8.0.31+: the Admin thread group (TP_CONNECTION_ADMIN connections)."""

    group_id: int
    """Its number, after the pool's own groups."""
    queries_per_s: float | None = None
    """Statements it executed per second since the last poll."""
    connections_per_s: float | None = None
    """Connections it accepted per second since the last poll."""


class ThreadStates(Schema):
    """MySQL Enterprise tp_thread_state summarised over all groups (STATE, MARKED_STALLED: 8.4+)."""

    threads: int = 0
    """Rows of tp_thread_state: the pool's threads."""
    by_state: dict[str, int] = Field(default_factory=dict)
    """Threads per STATE (empty before 8.4)."""
    by_type: dict[str, int] = Field(default_factory=dict)
    """Threads per TP_THREAD_TYPE (8.0.32+)."""
    marked_stalled: int | None = None
    """Threads with MARKED_STALLED set; null when the server has no such column."""
    waiting: dict[str, int] = Field(default_factory=dict)
    """Threads per WAIT_TYPE (THD_WAIT_*)."""
    # Internal, not in API answers: the threads running a statement (PROCESS_COUNT > 0), by their
    # performance_schema THREAD_ID (8.0.32+) -> (TP_GROUP_ID, WAIT_TYPE): which group a holder is in.
    busy: dict[int, tuple[int, str | None]] = Field(default_factory=dict, exclude=True)


class PoolSummary(Schema):
    """Whole-pool figures for flavors without (or besides) per-group data."""

    kind: PoolKind | None = None
    """Which pool implementation runs."""
    size: int | None = None
    """thread_pool_size: the number of thread groups."""
    stall_limit_ms: float | None = None
    """thread_pool_stall_limit in ms, whatever the flavor's unit."""
    stall_limit_raw: str | None = None
    """thread_pool_stall_limit as the server spells it, with its unit (MySQL Enterprise:
    "6 ×10 ms")."""
    threads: int | None = None
    """Threadpool_threads: the pool's worker threads."""
    idle_threads: int | None = None
    """Threadpool_idle_threads: the pool's idle workers."""
    high_prio_mode: str | None = None
    """Percona, AliSQL: thread_pool_high_prio_mode (transactions, statements or none)."""
    high_prio_tickets: str | None = None
    """Percona, AliSQL: thread_pool_high_prio_tickets."""
    queue_wait: list[QueueWaitStat] = Field(default_factory=list)
    """Percona 8.4.10+: the queue wait statistics, parsed."""
    queue_depth: QueueDepth | None = None
    """Percona 8.4.10+: requests waiting in the whole pool's queues."""
    admin_group: AdminGroup | None = None
    """MySQL Enterprise 8.0.31+: the Admin thread group, not one of `groups`."""
    thread_states: ThreadStates | None = None
    """MySQL Enterprise: tp_thread_state counts."""


class Ratio(Schema):
    """A ratio over a window of polls, or why there is none."""

    value: float | None = None
    """The ratio, 0..1; null when not meaningful here (see `note`)."""
    window_s: float | None = None
    """The seconds of history it covers (up to ratio_window_s)."""
    regime: str | None = None
    """The thread handling it was computed under (pool-of-threads, one-thread-per-connection)."""
    note: str | None = None
    """Why `value` is null, or how to read it."""


class Ratios(Schema):
    """Cache-miss ratios over the ratio window."""

    thread_cache_miss: Ratio = Field(default_factory=Ratio)
    """ΔThreads_created / ΔConnections: only meaningful with one thread per connection."""
    buffer_pool_miss: Ratio = Field(default_factory=Ratio)
    """ΔInnodb_buffer_pool_reads / ΔInnodb_buffer_pool_read_requests."""


class TargetState(Schema):
    """Everything one poll saw on one target, after derivation. A field whose collector failed is
    null (lists: empty), and that collector's entry in `collectors` says why."""

    target: str
    """The target's name."""
    ts: float
    """When the poll ran, Unix time in seconds."""
    status: TargetStatus
    """The target's status at that poll."""
    groups: list[GroupState] = Field(default_factory=list)
    """The pool's thread groups, by number."""
    queue: list[QueuedConnection] = Field(default_factory=list)
    """Queued requests, longest waiting first, at most 200."""
    queued_connections: int | None = None
    """Every queued request, while `queue` lists at most 200."""
    transactions: Transactions | None = None
    """Open InnoDB transactions."""
    waits: list[WaitReason] = Field(default_factory=list)
    """Why the pool's workers waited, per reason."""
    sessions: list[Session] = Field(default_factory=list)
    """Sessions running a statement, longest running first, at most 500."""
    threads: Threads = Field(default_factory=Threads)
    """The server's thread counts."""
    throughput: Throughput = Field(default_factory=Throughput)
    """Queries, transactions and connections per second."""
    ratios: Ratios = Field(default_factory=Ratios)
    """Thread-cache and buffer-pool miss ratios over ratio_window_s."""
    variables: dict[str, str] = Field(default_factory=dict)
    """The server variables Poolscope reads, as strings (read every 5 s, carried in between)."""
    pool: PoolSummary | None = None
    """Whole-pool figures; null when the pool is off."""
    collectors: list[CollectorStatus] = Field(default_factory=list)
    """How each collector fared at this poll."""
    missing_privileges: list[str] = Field(default_factory=list)
    """Privileges the monitoring user lacks for some collector, e.g. PROCESS."""
    holders: list[GroupHolders] = Field(default_factory=list)
    """Who holds each group's workers: read while some group has a queue or is stalled, and one
    poll after; empty otherwise (an idle pool costs nothing)."""
    holders_scope: Literal["group", "server"] | None = None
    """`group`: holders are placed in their thread group by the server's own rule; `server`: the
    server has no per-group view (Percona), holders are listed for the whole pool; null when no
    holders were read."""
    holders_notes: list[str] = Field(default_factory=list)
    """What limits the holders' detail on this server, e.g. how to turn on the metadata lock
    instrument."""


class FlightHolder(Schema):
    """A holder as the flight recorder keeps it: who, for how long, which statement shape."""

    connection_id: int
    """The connection (PROCESSLIST.ID)."""
    user: str | None = None
    """Its user."""
    host: str | None = None
    """Its client host:port."""
    time_s: float | None = None
    """Seconds in the current statement."""
    state: str | None = None
    """PROCESSLIST.STATE."""
    digest: str | None = None
    """The statement's digest (Holder.digest)."""
    statement: str | None = None
    """The statement's shape, literals replaced by ? (cut to 200 characters)."""
    waits_on: str | None = None
    """What it waits on, when the server says."""
    blocked_by: list[int] = Field(default_factory=list)
    """The connections holding what it waits on."""


class FlightQueued(Schema):
    """A queued request as the flight recorder keeps it."""

    connection_id: int | None = None
    """The connection; null for a login waiting in the queue."""
    user: str | None = None
    """Its user."""
    host: str | None = None
    """Its client host:port."""
    waited_ms: float
    """How long it had waited, in ms."""
    digest: str | None = None
    """The digest of the statement its connection ran last (the queued request is unread)."""
    statement: str | None = None
    """That statement's shape."""


class FlightGroup(Schema):
    """One thread group in one second of the flight recorder."""

    group: int | None
    """The thread group; null: the whole pool (no per-group view)."""
    stalled: bool = False
    """The group was stalled."""
    queue_length: int | None = None
    """Requests in its queue."""
    holders: list[FlightHolder] = Field(default_factory=list)
    """Its executing connections, longest running first (at most 10)."""
    holders_left_out: int = 0
    """Holders beyond those listed."""
    queued: list[FlightQueued] = Field(default_factory=list)
    """Its queued requests, longest waiting first (at most 20)."""
    queued_left_out: int = 0
    """Queued requests beyond those listed."""


class FlightEntry(Schema):
    """One second of the flight recorder: the groups under pressure (none: an idle second)."""

    ts: float
    """The poll's time, Unix time in seconds."""
    groups: list[FlightGroup] = Field(default_factory=list)
    """The groups with holders read or requests queued."""


HeldSort = Literal["stalled", "held", "queued"]


class HeldDigest(Schema):
    """One statement digest's share of the pool over a time range ("who held the pool")."""

    digest: str
    """The digest (`other`: digests beyond the 20 busiest of a poll; `unread`: queued requests
    whose connection ran nothing Poolscope saw)."""
    text: str
    """The statement's shape, literals replaced by ?."""
    held_s: float = 0.0
    """Worker-seconds its statements held in a group that had a queue."""
    stalled_s: float = 0.0
    """Worker-seconds its statements held in a stalled group."""
    queued_s: float = 0.0
    """Request-seconds its requests waited in a queue (counted under the statement the
    connection ran last: the queued request itself is unread)."""
    stall_episodes: int = 0
    """Stall episodes it held a stalled group in."""
    calls: int = 0
    """Executions first seen holding a pressured group."""
    max_time_s: float | None = None
    """The longest time in statement seen."""
    clients: list[str] = Field(default_factory=list)
    """user@host of the connections that ran it (the host without its port)."""
    groups: list[str] = Field(default_factory=list)
    """The thread groups it held or queued in (empty where the server has no per-group view)."""


class HeldOut(Schema):
    """Digests ranked by the time they held the pool over [from, to]."""

    from_: float = Field(serialization_alias="from")
    """Start of the range, Unix time in seconds."""
    to: float
    """End of the range."""
    sort: HeldSort
    """What the digests are ranked by: stalled_s, held_s or queued_s, largest first."""
    digests: list[HeldDigest]
    """The digests, at most `limit`."""


class PollEvent(Schema):
    """What the live channel pushes after each poll."""

    target: str
    """The target's name."""
    ts: float
    """When the poll ran, Unix time in seconds."""
    target_info: TargetInfo
    """The target as /api/targets lists it, after this poll."""
    state: TargetState | None
    """The poll's state; null when the target is down (the last good state stays at /state)."""
    samples: list[Sample]
    """The poll's samples, shaped as stored: a chart appends them to the series it fetched.
    For a target that is down, only target_up = 0."""


class SeriesOut(Schema):
    """One series of a metric: its labels and points."""

    metric: str
    """The metric's name (see the metric reference)."""
    labels: dict[str, str]
    """The series' labels, e.g. {"group": "0"}."""
    points: list[tuple[float, float | None]]
    """[ts, value] pairs: ts the bucket's start (Unix s), value null for no sample. Buckets
    without data are left out."""


class MetricsOut(Schema):
    """A metric history answer: every series of the asked metrics over [from, to]."""

    from_: float = Field(serialization_alias="from")
    """Start of the range, Unix time in seconds."""
    to: float
    """End of the range, Unix time in seconds."""
    step_s: float
    """Spacing of the points (the bucket width), in s."""
    resolution: Literal["raw", "rollup"]
    """`raw`: read from raw samples; `rollup`: mostly from per-minute (or coarser) rollups."""
    rollup_step_s: float | None = None
    """With `rollup`: the spacing of the points read from rollups (never below step_s); the newest
    minutes, after the last completed rollup, come from raw samples at step_s."""
    series: list[SeriesOut]
    """One entry per series of the asked metrics."""
