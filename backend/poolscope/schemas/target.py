"""A target as the API lists it: the server, its connection, collector health and summary."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

TargetStatus = Literal["up", "down", "starting"]
# The server families Poolscope tells apart (poller/discovery.py detect_flavor).
Flavor = Literal["mariadb", "mysql", "percona", "alisql", "unknown"]
# The thread pool implementations it reads (poolscope/flavors.py holds each one's names and units).
PoolKind = Literal["mariadb", "percona", "mysql_enterprise"]


class Health(BaseModel):
    """/api/health: the backend answers, and which version it is."""

    status: Literal["ok"]
    version: str


class Sample(BaseModel):
    """One value of one series at one poll; the generic unit the store keeps."""

    metric: str
    labels: dict[str, str] = Field(default_factory=dict)
    value: float | None


class ServerInfo(BaseModel):
    """What was detected on connect: decides which collectors apply."""

    flavor: Flavor
    version: str
    version_tuple: tuple[int, int, int] = (0, 0, 0)
    thread_handling: str
    pool_enabled: bool
    pool_tables: list[str] = Field(default_factory=list)
    exact_stats: bool | None = None
    queue_time_mode: Literal["exact", "coarse"] | None = None
    extra_port: int = 0
    # Which pool implementation runs (None: none, or the pool is off): decides the collectors and
    # the variable names and units (poolscope/flavors.py).
    pool_kind: PoolKind | None = None
    # "MySQL Enterprise", "Percona Server", ... as the server announces itself (@@version_comment).
    edition: str | None = None
    # MySQL / Percona 8.0.14+ administrative interface (0 = none: admin_address unset).
    admin_port: int = 0
    # What the UI may offer for this server (flavors.CAP_*).
    capabilities: list[str] = Field(default_factory=list)
    # Things the user should know about how this server is read (unknown version, Percona-derived
    # pool, replayed fixture, ...). Shown on the target; never an error.
    notes: list[str] = Field(default_factory=list)
    # Pool off: what turning it on involves for this flavor, and a config snippet (enable_pool.py).
    enable_hint: str | None = None
    enable_snippet: str | None = None
    # The pool runs but this credential cannot read its tables (MySQL Enterprise without SELECT on
    # performance_schema): the privilege, as the GRANT spells it, that would let Poolscope read it.
    pool_grant_needed: str | None = None
    # Which of the variables Poolscope reads exist on this server (found on connect), so each
    # poll can read them as one cheap row of @@GLOBAL values. Internal: not in API answers.
    known_variables: list[str] = Field(default_factory=list, exclude=True)
    # thread_pool_size as read on connect where it is startup-only (MySQL Enterprise): tells the
    # admin thread group's row (8.0.31+, numbered after the pool's own groups) apart. Internal.
    startup_pool_size: int | None = Field(default=None, exclude=True)


class ConnectionInfo(BaseModel):
    host: str
    port: int
    port_kind: Literal["extra_port", "admin_port", "port", "fixture"]
    note: str | None = None


class CollectorStatus(BaseModel):
    name: str
    ok: bool
    duration_ms: float | None = None
    error: str | None = None
    skipped: str | None = None
    # For collectors that do not run on every poll: their resolution, and the age of the
    # section carried forward (None when it ran on this poll).
    every_s: float | None = None
    carried_s: float | None = None
    note: str | None = None


class TargetSummary(BaseModel):
    queue_length: int | None = None
    queued_connections: int | None = None
    groups: int | None = None
    stalled_groups: int | None = None
    threads_connected: int | None = None
    threads_running: int | None = None
    qps: float | None = None
    tps: float | None = None
    active_transactions: int | None = None
    # Threadpool_threads / Threadpool_idle_threads (MariaDB, Percona): Percona's only pool figures.
    pool_threads: int | None = None
    pool_idle_threads: int | None = None
    # The longest a queued request has waited, over every group (the overview sorts on it).
    longest_wait_ms: float | None = None


class TargetInfo(BaseModel):
    """A target's health as the overview shows it."""

    name: str
    # The target's tags from the config (cluster, role, region, ...).
    tags: dict[str, str] = Field(default_factory=dict)
    status: TargetStatus = "starting"
    reason: str | None = None
    server: ServerInfo | None = None
    connection: ConnectionInfo | None = None
    last_poll_at: float | None = None
    last_success_at: float | None = None
    poll_duration_ms: float | None = None
    poll_interval_s: float
    # While down: the pause before the next attempt (it grows, up to 10 s); None while up.
    retry_in_s: float | None = None
    collectors: list[CollectorStatus] = Field(default_factory=list)
    missing_privileges: list[str] = Field(default_factory=list)
    summary: TargetSummary = Field(default_factory=TargetSummary)


class OverviewRow(BaseModel):
    """One target on the fleet overview: what sorting, filtering and the table need, nothing more."""

    name: str
    tags: dict[str, str] = Field(default_factory=dict)
    status: TargetStatus
    reason: str | None = None
    last_poll_at: float | None = None
    pool_enabled: bool | None = None
    groups: int | None = None
    stalled_groups: int | None = None
    queue_length: int | None = None
    queued_connections: int | None = None
    longest_wait_ms: float | None = None
    threads_connected: int | None = None
    threads_running: int | None = None
    qps: float | None = None
    active_alerts: int = 0


class Overview(BaseModel):
    """GET /api/overview: every target as one compact row, in config order."""

    ts: float
    targets: list[OverviewRow]
