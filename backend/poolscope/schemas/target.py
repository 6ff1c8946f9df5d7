"""A target as the API lists it: the server, its connection, collector health and summary."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from poolscope.schemas.base import Schema

TargetStatus = Literal["up", "down", "starting"]
# The server families Poolscope tells apart (poller/discovery.py detect_flavor).
Flavor = Literal["mariadb", "mysql", "percona", "alisql", "unknown"]
# The thread pool implementations it reads (poolscope/flavors.py holds each one's names and units).
PoolKind = Literal["mariadb", "percona", "mysql_enterprise"]
# How the server times queued requests: exact, or coarse (thread_pool_exact_stats=OFF overstates waits).
QueueTimeMode = Literal["exact", "coarse"]
# The two ports outside the pool: MariaDB's (and older Percona's) extra_port, MySQL 8.0.14+'s admin_port.
AdminPortKind = Literal["extra_port", "admin_port"]


class Health(Schema):
    """/api/health: the backend answers, and which version it is."""

    status: Literal["ok"]
    """Always `ok` when the backend answers."""
    version: str
    """Poolscope's version."""


class Sample(Schema):
    """One value of one series at one poll; the generic unit the store keeps."""

    metric: str
    """The metric's name (see the metric reference)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """The series' labels besides the target, e.g. {"group": "0"}."""
    value: float | None
    """The value in the metric's unit; null when it could not be computed this poll."""


class ServerInfo(Schema):
    """What was detected on connect: decides which collectors apply."""

    flavor: Flavor
    """The server's flavor, from @@version and @@version_comment."""
    version: str
    """@@version as the server reports it."""
    version_tuple: tuple[int, int, int] = (0, 0, 0)
    """The version's numbers, parsed from `version`; (0, 0, 0) when it could not be parsed."""
    thread_handling: str
    """@@thread_handling: pool-of-threads, one-thread-per-connection, loaded-dynamically, ..."""
    pool_enabled: bool
    """The thread pool runs."""
    pool_tables: list[str] = Field(default_factory=list)
    """The pool's tables this credential can read (THREAD_POOL_*, tp_*)."""
    exact_stats: bool | None = None
    """@@thread_pool_exact_stats (MariaDB); null when the server has no such variable."""
    queue_time_mode: QueueTimeMode | None = None
    """`coarse`: queue times come from the pool's timer tick and overstate waits (exact_stats
    OFF); `exact`: measured; null when unknown."""
    extra_port: int = 0
    """@@extra_port, the port outside the pool (MariaDB, Percona 5.7); 0 = none."""
    pool_kind: PoolKind | None = None
    """Which pool implementation runs; null when none runs. Decides the collectors and the
    variable names and units."""
    percona_builtin_pool: bool = False
    """Percona Server lists its built-in pool's variables (thread_pool_high_prio_mode, ...): this
    build has that pool. With MySQL's thread_pool plugin running beside them (a 9.7 compat
    build), thread_pool_stall_limit is Percona's, in ms, not the plugin's 10 ms units."""
    performance_schema: bool | None = None
    """@@performance_schema (startup only): whether the server runs the Performance Schema, which
    names metadata lock holders and statement digests; null when the server did not say."""
    edition: str | None = None
    """@@version_comment: "MySQL Enterprise", "Percona Server", ... as the server announces
    itself."""
    admin_port: int = 0
    """The MySQL / Percona 8.0.14+ administrative interface's port; 0 when admin_address is
    unset."""
    capabilities: list[str] = Field(default_factory=list)
    """What the UI may offer for this server: groups, group_stats, queue_entries, waits,
    pool_threads, queue_wait_stats, queue_depth."""
    notes: list[str] = Field(default_factory=list)
    """Things to know about how this server is read (an unknown or newer version, a pool
    recognised from its variables, a replayed fixture, ...). Never an error."""
    enable_hint: str | None = None
    """Pool off: what turning it on involves for this flavor and version."""
    enable_snippet: str | None = None
    """Pool off: the config lines that turn it on, valid for this version."""
    pool_grant_needed: str | None = None
    """The pool runs but this credential cannot read its tables (MySQL Enterprise without SELECT on
    performance_schema): the privilege, as GRANT spells it, that would let Poolscope read them."""
    # Internal, not in API answers: which of the variables Poolscope reads exist on this server
    # (found on connect), so each poll reads them as one cheap row of @@GLOBAL values.
    known_variables: list[str] = Field(default_factory=list, exclude=True)
    # Internal: thread_pool_size as read on connect where it is startup-only (MySQL Enterprise),
    # to tell the admin thread group's row (8.0.31+, numbered after the pool's groups) apart.
    startup_pool_size: int | None = Field(default=None, exclude=True)


class ConnectionInfo(Schema):
    """Where the poller connects, and why there."""

    host: str
    """The server's host."""
    port: int
    """The port polled."""
    port_kind: Literal[AdminPortKind, "port", "fixture"]
    """Which port that is: `extra_port` or `admin_port` (outside the pool), `port` (the normal
    one, whose queue the poll then waits in), `fixture` (replayed output)."""
    note: str | None = None
    """Why the poller fell back to the normal port, if it did."""


class CollectorStatus(Schema):
    """How one collector (one source of the server) fared at the last poll."""

    name: str
    """The collector's name (see the collector reference)."""
    ok: bool
    """It ran and its rows were read."""
    duration_ms: float | None = None
    """Time it took at this poll, in ms: reading its statement's result and parsing it."""
    error: str | None = None
    """It ran and failed: the server's message."""
    skipped: str | None = None
    """It did not run, and why: it does not apply (e.g. "thread pool off"), or it is retried
    later after a privilege refusal (e.g. "needs PROCESS ...")."""
    every_s: float | None = None
    """For a source read at most this often (slow-moving ones), its period in s; null: every
    poll."""
    carried_s: float | None = None
    """This poll reused the source's reading from this many seconds ago (its samples were stored
    when it was read); null when it ran on this poll."""
    note: str | None = None
    """Anything else to know about this source on this server."""


class TargetSummary(Schema):
    """The overview's figures from the last poll."""

    queue_length: int | None = None
    """Requests queued, summed over the groups."""
    queued_connections: int | None = None
    """Queued requests counted from the queue itself (THREAD_POOL_QUEUES; Percona 8.4.10+: the
    whole pool's waiting requests)."""
    groups: int | None = None
    """Thread groups."""
    stalled_groups: int | None = None
    """Groups Poolscope judged stalled at this poll."""
    threads_connected: int | None = None
    """Threads_connected."""
    threads_running: int | None = None
    """Threads_running."""
    qps: float | None = None
    """Queries per second, less Poolscope's own."""
    tps: float | None = None
    """Commits plus rollbacks per second."""
    active_transactions: int | None = None
    """Open InnoDB transactions."""
    pool_threads: int | None = None
    """Threadpool_threads (MariaDB, Percona): Percona's only pool figures, with the next."""
    pool_idle_threads: int | None = None
    """Threadpool_idle_threads (MariaDB, Percona)."""
    longest_wait_ms: float | None = None
    """The longest a queued request has waited, over every group, in ms (the overview sorts on
    it)."""


class TargetInfo(Schema):
    """A target's health as the overview shows it."""

    name: str
    """The target's name from the config."""
    tags: dict[str, str] = Field(default_factory=dict)
    """The target's tags from the config (cluster, role, region, ...)."""
    status: TargetStatus = "starting"
    """`up`: the last poll reached the server; `down`: it did not (see `reason`); `starting`: not
    polled yet."""
    reason: str | None = None
    """Why the target is down, readable by a person; never holds a credential."""
    server: ServerInfo | None = None
    """What was detected on connect; null until the first successful connect."""
    connection: ConnectionInfo | None = None
    """Where the poller connects."""
    last_poll_at: float | None = None
    """The last poll attempt (successful or not), Unix time in seconds."""
    last_success_at: float | None = None
    """The last poll that reached the server, Unix time in seconds."""
    poll_duration_ms: float | None = None
    """The last poll's wall time, in ms."""
    poll_interval_s: float
    """Seconds between polls (poll_interval_s)."""
    retry_in_s: float | None = None
    """While down: the pause before the next attempt, in s (it grows, up to 10 s); null while
    up."""
    collectors: list[CollectorStatus] = Field(default_factory=list)
    """One entry per source, at the last poll."""
    missing_privileges: list[str] = Field(default_factory=list)
    """Privileges the monitoring user lacks for some collector, e.g. PROCESS."""
    summary: TargetSummary = Field(default_factory=TargetSummary)
    """Queue, stalls, threads and throughput at the last poll (what the overview shows)."""


class OverviewRow(Schema):
    """One target on the fleet overview: what sorting, filtering and the table need, nothing more."""

    name: str
    """The target's name."""
    tags: dict[str, str] = Field(default_factory=dict)
    """The target's tags from the config."""
    status: TargetStatus
    """`up`, `down` or `starting`."""
    reason: str | None = None
    """Why the target is down."""
    last_poll_at: float | None = None
    """The last poll attempt, Unix time in seconds."""
    pool_enabled: bool | None = None
    """The thread pool runs; null until the server is known."""
    groups: int | None = None
    """Thread groups."""
    stalled_groups: int | None = None
    """Groups judged stalled at the last poll."""
    queue_length: int | None = None
    """Requests queued, summed over the groups."""
    queued_connections: int | None = None
    """Queued requests counted from the queue itself."""
    longest_wait_ms: float | None = None
    """The longest a queued request has waited, in ms."""
    threads_connected: int | None = None
    """Threads_connected."""
    threads_running: int | None = None
    """Threads_running."""
    qps: float | None = None
    """Queries per second, less Poolscope's own."""
    active_alerts: int = 0
    """Alerts firing for the target."""


class Overview(Schema):
    """GET /api/overview: every target as one compact row, in config order."""

    ts: float
    """When the answer was made, Unix time in seconds."""
    poll_interval_s: float
    """Seconds between polls: a target whose last poll is older than two of them is not up any
    more as far as anyone can tell (the store fails, or nothing polls it): shown stale."""
    targets: list[OverviewRow]
    """One row per target, in config order."""
