"""What each thread pool flavor calls things: variable names, units, ranges, admin port, how to enable it.

One table that detection, collectors, the UI wording and recommendation rules all read, so a
rule never hard-codes MariaDB's names for a Percona or MySQL Enterprise server. Sources: the
vendors' manuals as summarised in /work/shared/REFERENCE.md and the seed documents (seed 001
lists the Percona/AliSQL variables with their defaults and units).

Usage from another module (e.g. a recommendation rule):

    spec = flavor_spec(server)                  # None when no pool implementation is known
    name = spec.stall_limit.name                # "thread_pool_stall_limit"
    ms = spec.stall_limit_ms(state.variables)   # MySQL Enterprise's 10 ms units made into ms
    raw = spec.stall_limit.from_ms(50)          # the value to SET for 50 ms on this flavor
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from poolscope.schemas import ServerInfo

PoolKind = Literal["mariadb", "percona", "mysql_enterprise"]

# What the UI may offer for a server; computed from the pool kind and the tables found.
CAP_GROUPS = "groups"  # a per-group model (GroupState rows): table + heatmap
CAP_GROUP_STATS = "group_stats"  # per-group counters turned into rates
CAP_QUEUE_ENTRIES = "queue_entries"  # one row per queued connection with its wait
CAP_WAITS = "waits"  # wait reasons with counts
CAP_POOL_THREADS = "pool_threads"  # Threadpool_threads / Threadpool_idle_threads status
CAP_QUEUE_WAIT_STATS = "queue_wait_stats"  # Percona 8.4+ "avg: …, min: …" queue-wait statistics


@dataclass(frozen=True)
class VariableSpec:
    """One server variable as this flavor names it, with its unit and documented range."""

    name: str
    # How many milliseconds one unit of the raw value is (None: not a duration).
    unit_ms: float | None = None
    unit_label: str = ""
    min_value: float | None = None
    max_value: float | None = None
    default: str | None = None
    dynamic: bool = True

    def to_ms(self, raw: str | float | None) -> float | None:
        if raw is None or self.unit_ms is None:
            return None
        try:
            return float(raw) * self.unit_ms
        except (TypeError, ValueError):
            return None

    def from_ms(self, ms: float) -> int:
        """The raw value to set for `ms` milliseconds, clamped to the documented range."""
        assert self.unit_ms is not None, f"{self.name} is not a duration"
        raw = max(round(ms / self.unit_ms), 1)
        if self.min_value is not None:
            raw = max(raw, int(self.min_value))
        if self.max_value is not None:
            raw = min(raw, int(self.max_value))
        return raw


@dataclass(frozen=True)
class FlavorSpec:
    pool_kind: PoolKind
    label: str
    # Versions this table was written against: outside them Poolscope still reads what exists,
    # and says so in ServerInfo.notes.
    known_versions: tuple[tuple[int, int], tuple[int, int]]
    stall_limit: VariableSpec
    size: VariableSpec
    high_prio_mode: VariableSpec | None
    high_prio_tickets: VariableSpec | None
    # Priority for open transactions on MariaDB (thread_pool_priority + prio_kickup_timer).
    priority: VariableSpec | None
    prio_kickup_timer: VariableSpec | None
    oversubscribe: VariableSpec | None
    max_threads: VariableSpec | None
    # The variable naming the admin port that bypasses the pool, and since which version it is used.
    admin_port_var: str | None
    how_to_enable: str
    enable_snippet: str
    extra: dict[str, VariableSpec] = field(default_factory=dict)

    def stall_limit_ms(self, variables: dict[str, str]) -> float | None:
        return self.stall_limit.to_ms(variables.get(self.stall_limit.name))


MARIADB = FlavorSpec(
    pool_kind="mariadb",
    label="MariaDB thread pool",
    known_versions=((10, 5), (11, 8)),
    stall_limit=VariableSpec(
        "thread_pool_stall_limit",
        unit_ms=1,
        unit_label="ms",
        min_value=1,
        max_value=4294967295,
        default="500",
    ),
    size=VariableSpec("thread_pool_size", min_value=1, max_value=100000, default="CPU count"),
    high_prio_mode=None,
    high_prio_tickets=None,
    priority=VariableSpec("thread_pool_priority", default="auto"),
    prio_kickup_timer=VariableSpec(
        "thread_pool_prio_kickup_timer", unit_ms=1, unit_label="ms", min_value=0, default="1000"
    ),
    oversubscribe=VariableSpec("thread_pool_oversubscribe", min_value=1, max_value=1000, default="3"),
    max_threads=VariableSpec("thread_pool_max_threads", min_value=1, max_value=65536, default="65536"),
    admin_port_var="extra_port",
    how_to_enable="thread_handling is read-only at runtime: set it in the server config and restart.",
    enable_snippet=(
        "[mysqld]\nthread_handling         = pool-of-threads\nthread_pool_exact_stats = ON\n"
        "extra_port              = 3307   # admin/monitoring port outside the pool"
    ),
)

PERCONA = FlavorSpec(
    pool_kind="percona",
    label="Percona thread pool",
    known_versions=((5, 7), (8, 4)),
    # Ranges are left open where our sources (seed 001, REFERENCE.md) do not state them.
    stall_limit=VariableSpec("thread_pool_stall_limit", unit_ms=1, unit_label="ms", default="500"),
    size=VariableSpec("thread_pool_size", min_value=1, default="CPU count"),
    high_prio_mode=VariableSpec("thread_pool_high_prio_mode", default="transactions"),
    high_prio_tickets=VariableSpec(
        "thread_pool_high_prio_tickets", min_value=0, max_value=4294967295, default="4294967295"
    ),
    priority=None,
    prio_kickup_timer=None,
    oversubscribe=VariableSpec("thread_pool_oversubscribe", min_value=1, max_value=1000, default="3"),
    max_threads=VariableSpec("thread_pool_max_threads", min_value=1, default="100000"),
    # Percona 5.7 has extra_port; 8.0.14+ replaced it with MySQL's admin_port (see admin_port()).
    admin_port_var="extra_port",
    how_to_enable="thread_handling is read-only at runtime: set it in my.cnf and restart.",
    enable_snippet=(
        "[mysqld]\nthread_handling            = pool-of-threads\n"
        "thread_pool_high_prio_mode = transactions\n"
        "admin_address              = 127.0.0.1   # 8.0.14+: admin port outside the pool\n"
        "admin_port                 = 33062"
    ),
)

MYSQL_ENTERPRISE = FlavorSpec(
    pool_kind="mysql_enterprise",
    label="MySQL Enterprise thread_pool plugin",
    known_versions=((8, 0), (8, 4)),
    # Units of 10 ms (REFERENCE.md): 6 means 60 ms.
    stall_limit=VariableSpec(
        "thread_pool_stall_limit", unit_ms=10, unit_label="×10 ms", min_value=4, max_value=600, default="6"
    ),
    size=VariableSpec("thread_pool_size", min_value=1, max_value=512, default="16", dynamic=False),
    high_prio_mode=None,
    high_prio_tickets=None,
    priority=VariableSpec("thread_pool_high_priority_connection", default="0"),
    prio_kickup_timer=VariableSpec(
        "thread_pool_prio_kickup_timer", unit_ms=1, unit_label="ms", min_value=0, default="1000"
    ),
    oversubscribe=None,
    max_threads=None,
    admin_port_var="admin_port",
    how_to_enable=(
        "The thread pool is an Enterprise plugin: load it at startup (thread_pool_size is startup-only) "
        "and restart."
    ),
    enable_snippet=(
        "[mysqld]\nplugin-load-add  = thread_pool.so\nthread_pool_size = 16\n"
        "admin_address    = 127.0.0.1   # admin port outside the pool\nadmin_port       = 33062"
    ),
    extra={
        "algorithm": VariableSpec("thread_pool_algorithm", default="0", dynamic=False),
        "max_unused_threads": VariableSpec("thread_pool_max_unused_threads", default="0"),
    },
)

SPECS: dict[PoolKind, FlavorSpec] = {
    "mariadb": MARIADB,
    "percona": PERCONA,
    "mysql_enterprise": MYSQL_ENTERPRISE,
}

# Where enabling the pool is explained for a server whose pool is off, by flavor.
HOW_TO_ENABLE_BY_FLAVOR: dict[str, PoolKind] = {
    "mariadb": "mariadb",
    "percona": "percona",
    "alisql": "percona",
    "mysql": "mysql_enterprise",
}


def flavor_spec(server: ServerInfo | None) -> FlavorSpec | None:
    """The spec of the server's pool implementation, or None when it has none we know."""
    if server is None or server.pool_kind is None:
        return None
    return SPECS[server.pool_kind]


def enable_spec(server: ServerInfo) -> FlavorSpec | None:
    """For a server with the pool off: which implementation it could turn on."""
    kind = server.pool_kind or HOW_TO_ENABLE_BY_FLAVOR.get(server.flavor)
    return SPECS[kind] if kind else None


def how_to_enable(server: ServerInfo) -> tuple[str | None, str | None]:
    """For a server with the pool off: what enabling it involves, and a config snippet."""
    spec = enable_spec(server)
    if spec is None:
        return None, None
    hint = spec.how_to_enable
    if server.flavor == "mysql" and "enterprise" not in (server.edition or "").lower():
        hint = (
            "MySQL Community Server has no thread pool: it is the Enterprise thread_pool plugin "
            "(Percona Server and MariaDB ship a pool for free). " + hint
        )
    return hint, spec.enable_snippet


def admin_port_variable(flavor: str, version: tuple[int, int, int]) -> str | None:
    """The variable whose port bypasses the pool: extra_port (MariaDB, Percona < 8.0.14, AliSQL)
    or admin_port (MySQL and Percona 8.0.14+, where extra_port was removed)."""
    if flavor == "mariadb":
        return "extra_port"
    if flavor in ("mysql", "percona") and version >= (8, 0, 14):
        return "admin_port"
    if flavor in ("percona", "alisql"):
        return "extra_port"
    return None


def version_note(server: ServerInfo) -> str | None:
    """A note when the server is outside the versions the flavor's table was written for."""
    spec = flavor_spec(server)
    if spec is None or server.version_tuple == (0, 0, 0):
        return None
    major_minor = server.version_tuple[:2]
    low, high = spec.known_versions
    shown = f"{server.version_tuple[0]}.{server.version_tuple[1]}"
    if major_minor > high:
        return (
            f"{spec.label} on {shown} is newer than the versions Poolscope knows "
            f"({low[0]}.{low[1]}–{high[0]}.{high[1]}): it reads what the server offers and skips what is missing."
        )
    if major_minor < low:
        return (
            f"{spec.label} on {shown} is older than the versions Poolscope knows "
            f"({low[0]}.{low[1]}–{high[0]}.{high[1]}): some sources may be missing."
        )
    return None
