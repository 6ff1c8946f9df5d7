"""What each thread pool flavor calls things: variable names, units, ranges, admin port.

One table that detection, collectors, the UI wording and recommendation rules all read, so a
rule never hard-codes MariaDB's names for a Percona or MySQL Enterprise server. Ranges and units
come from the vendors' own material, cited on each spec below and in
backend/tests/fixtures/<flavor>/<version>/README.md. How each flavor and version turns its pool on
(and the config snippet that version accepts) lives in poolscope/enable_pool.py.

Usage from another module (e.g. a recommendation rule):

    spec = flavor_spec(server)                  # None when no pool implementation is known
    name = spec.stall_limit.name                # "thread_pool_stall_limit"
    ms = spec.stall_limit_ms(state.variables)   # MySQL Enterprise's 10 ms units made into ms
    raw = spec.stall_limit.from_ms(50)          # the value to SET for 50 ms on this flavor
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from poolscope.schemas import PoolKind, ServerInfo

# What the UI may offer for a server; computed from the pool kind and what the server exposes.
CAP_GROUPS = "groups"  # a per-group model (GroupState rows): table + heatmap
CAP_GROUP_STATS = "group_stats"  # per-group counters turned into rates
CAP_QUEUE_ENTRIES = "queue_entries"  # one row per queued connection with its wait
CAP_WAITS = "waits"  # wait reasons with counts
CAP_POOL_THREADS = "pool_threads"  # Threadpool_threads / Threadpool_idle_threads status
# Percona 8.4.10+: the "avg: …, cnt: …" queue-wait statistics (Threadpool_average_*queue_wait_us).
CAP_QUEUE_WAIT_STATS = "queue_wait_stats"
# Percona 8.4.10+: requests waiting in the whole pool's queues (Threadpool_requests_waiting_in_*):
# a server-wide count, not per group.
CAP_QUEUE_DEPTH = "queue_depth"

# Percona's queue-wait statistics and queue depth as its manual names them
# (psmysql-docs/docs/threadpool.md, "Status variables"; first shipped in 8.4.10-10, PS-10083). The server sums
# them over all thread groups (percona-server sql/threadpool_unix.cc,
# tp_get_requests_waiting_in_queue_count() and friends): there is no per-group figure.
PERCONA_QUEUE_WAIT_STATUS = ("Threadpool_average_queue_wait_us", "Threadpool_average_hp_queue_wait_us")
PERCONA_QUEUE_DEPTH_STATUS = {
    "normal": "Threadpool_requests_waiting_in_queue",
    "high": "Threadpool_requests_waiting_in_hp_queue",
}
PERCONA_STARVED_STATUS = "Threadpool_requests_starved_in_queue"


@dataclass(frozen=True)
class VariableSpec:
    """One server variable as this flavor names it, with its unit and documented range.

    The one variable type: the flavor table below, the recommendation rules' server-wide settings
    (recommend/flavors.py) and every place that shows or proposes a duration read it.
    """

    name: str
    # How many milliseconds one unit of the raw value is (None: not a duration).
    unit_ms: float | None = None
    unit_label: str = ""
    min_value: float | None = None
    max_value: float | None = None
    default: str | None = None
    dynamic: bool = True
    # Where the pool acts on a different duration than the raw value says (a plugin that rounds
    # and clamps the server's variable into its own units): the ms it acts on, from the raw ms.
    acts_on_ms: Callable[[float], float] | None = None

    def to_ms(self, raw: str | float | None) -> float | None:
        """The duration in ms the pool acts on; None when missing, unreadable, or not a duration."""
        if raw is None or self.unit_ms is None:
            return None
        try:
            ms = float(raw) * self.unit_ms
        except (TypeError, ValueError):
            return None
        return self.acts_on_ms(ms) if self.acts_on_ms is not None else ms

    def from_ms(self, ms: float) -> int:
        """The raw value to set for `ms` milliseconds, clamped to the documented range."""
        assert self.unit_ms is not None, f"{self.name} is not a duration"
        raw = max(round(ms / self.unit_ms), 1)
        if self.min_value is not None:
            raw = max(raw, int(self.min_value))
        if self.max_value is not None:
            raw = min(raw, int(self.max_value))
        return raw

    def native(self, raw: str | float) -> str:
        """ " (4 ×10 ms)" where the raw value does not count in ms, else nothing: after an ms figure."""
        return f" ({raw} {self.unit_label})" if self.unit_ms not in (None, 1) else ""

    def shown(self, raw: str | float | None) -> str | None:
        """The raw value with its unit, and in ms when the unit is not ms ("6 ×10 ms = 60 ms")."""
        if raw is None:
            return None
        if self.unit_ms is None or self.unit_ms == 1:
            return f"{raw} {self.unit_label}".strip()
        ms = self.to_ms(raw)
        return f"{raw} {self.unit_label}" + ("" if ms is None else f" = {ms:g} ms")


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
    # The variable naming the admin port that bypasses the pool (see admin_port_variable()).
    admin_port_var: str | None
    extra: dict[str, VariableSpec] = field(default_factory=dict)

    def stall_limit_ms(self, variables: dict[str, str]) -> float | None:
        return self.stall_limit.to_ms(variables.get(self.stall_limit.name))


# MariaDB KB "Thread Pool System and Status Variables".
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
)

# Ranges from percona/percona-server sql/sys_vars.cc (Sys_threadpool_*: stall_limit VALID_RANGE(10,
# UINT_MAX) in ms, dynamic; size 1..MAX_THREAD_GROUPS, 1024 in sql/threadpool.h; oversubscribe
# 1..1000; max_threads 1..MAX_CONNECTIONS) and defaults from the Percona manual's threadpool page.
# AliSQL 5.6 carries the same pool (alibaba/AliSQL sql/threadpool_unix.cc) and is read with this spec.
PERCONA = FlavorSpec(
    pool_kind="percona",
    label="Percona thread pool",
    known_versions=((5, 7), (9, 7)),
    stall_limit=VariableSpec(
        "thread_pool_stall_limit",
        unit_ms=1,
        unit_label="ms",
        min_value=10,
        max_value=4294967295,
        default="500",
    ),
    size=VariableSpec("thread_pool_size", min_value=1, max_value=1024, default="CPU count"),
    high_prio_mode=VariableSpec("thread_pool_high_prio_mode", default="transactions"),
    high_prio_tickets=VariableSpec(
        "thread_pool_high_prio_tickets", min_value=0, max_value=4294967295, default="4294967295"
    ),
    priority=None,
    prio_kickup_timer=None,
    oversubscribe=VariableSpec("thread_pool_oversubscribe", min_value=1, max_value=1000, default="3"),
    max_threads=VariableSpec("thread_pool_max_threads", min_value=1, max_value=100000, default="100000"),
    # Percona 5.7 has extra_port; 8.0.14+ replaced it with MySQL's admin_port (admin_port_variable()).
    admin_port_var="extra_port",
)

# MySQL Reference Manual 8.0/8.4/9.x, "MySQL Enterprise Thread Pool" and the thread_pool_*
# system variables: stall_limit counts 10 ms units (default 6 = 60 ms, maximum 600 = 6 s);
# thread_pool_size is startup-only, default 16, at most 512.
MYSQL_ENTERPRISE = FlavorSpec(
    pool_kind="mysql_enterprise",
    label="MySQL Enterprise thread_pool plugin",
    known_versions=((8, 0), (9, 7)),
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
    extra={
        "algorithm": VariableSpec("thread_pool_algorithm", default="0", dynamic=False),
        "max_unused_threads": VariableSpec("thread_pool_max_unused_threads", default="0"),
    },
)

# Percona Server 9.7 carries MySQL's thread_pool plugin (percona-server plugin/thread_pool/, from
# MySQL 9.7) beside its own pool. Two builds of it are documented; the server tells them apart:
# - the plugin as psmysql-docs' 9.7 pages describe it (its mysql-thread-pool page, PR #782): it owns
#   thread_pool_size and thread_pool_stall_limit (10 ms units) and Percona's own pool variables
#   are gone, so it reads exactly as MySQL Enterprise's plugin (PERCONA_PLUGIN);
# - the PERCONA_THREADPOOL_COMPAT build in percona/percona-server (plugin/thread_pool/CMakeLists.txt,
#   commit f1baae3d): Percona's server variables stay, so thread_pool_stall_limit is Percona's, in
#   ms (VALID_RANGE(10, UINT_MAX), dynamic), and the plugin acts on it rounded up to its 10 ms
#   units within 4..600 (thread_pool.h, percona_stall_limit_to_plugin_units(), read live);
#   thread_pool_size is Percona's too but the plugin reads it once, at start (thread_pool_plugin.cc,
#   update_config_defaults()). Recognised by Percona's own variables beside the tp_* tables.
PERCONA_BUILTIN_VARIABLES = (
    "thread_pool_high_prio_mode",
    "thread_pool_high_prio_tickets",
    "thread_pool_oversubscribe",
    "thread_pool_max_threads",
    "thread_pool_idle_timeout",
)
# Percona 9.7.2-2 is the first release said to carry the plugin (psmysql-docs' mysql-thread-pool
# page); before it only the built-in pool exists.
PERCONA_PLUGIN_SINCE = (9, 7, 2)


def _plugin_stall_ms(ms: float) -> float:
    """The compat plugin's stall limit for Percona's ms value: (ms + 9) / 10 units of 10 ms, 4..600."""
    return float(min(max(math.ceil(ms / 10), 4), 600) * 10)


PERCONA_PLUGIN = replace(
    MYSQL_ENTERPRISE, label="MySQL thread_pool plugin of Percona Server", known_versions=((9, 7), (9, 7))
)
PERCONA_PLUGIN_COMPAT = replace(
    PERCONA_PLUGIN,
    label="MySQL thread_pool plugin of Percona Server (compat build)",
    stall_limit=VariableSpec(
        "thread_pool_stall_limit",
        unit_ms=1,
        unit_label="ms",
        # What the plugin acts on: 40 ms to 6 s (the server itself takes 10..4294967295).
        min_value=40,
        max_value=6000,
        default="500",
        acts_on_ms=_plugin_stall_ms,
    ),
    size=VariableSpec("thread_pool_size", min_value=1, max_value=512, default="CPU count", dynamic=False),
)

SPECS: dict[PoolKind, FlavorSpec] = {
    "mariadb": MARIADB,
    "percona": PERCONA,
    "mysql_enterprise": MYSQL_ENTERPRISE,
}

# Which implementation a server with the pool off could turn on, by flavor.
ENABLE_KIND_BY_FLAVOR: dict[str, PoolKind] = {
    "mariadb": "mariadb",
    "percona": "percona",
    "alisql": "percona",
    "mysql": "mysql_enterprise",
}


def lists_percona_pool(variables: Iterable[str]) -> bool:
    """Percona's own pool variables are among these: the build has its built-in pool."""
    return not set(PERCONA_BUILTIN_VARIABLES).isdisjoint(variables)


def flavor_spec(server: ServerInfo | None) -> FlavorSpec | None:
    """The spec of the server's pool implementation, or None when it has none we know."""
    if server is None or server.pool_kind is None:
        return None
    if server.pool_kind == "mysql_enterprise" and server.flavor == "percona":
        return PERCONA_PLUGIN_COMPAT if server.percona_builtin_pool else PERCONA_PLUGIN
    return SPECS[server.pool_kind]


def stall_limit_ms(server: ServerInfo | None, variables: dict[str, str]) -> float | None:
    """thread_pool_stall_limit in ms in the server flavor's unit (MySQL Enterprise counts 10 ms);
    None when the variable is missing or the flavor's unit is unknown."""
    spec = flavor_spec(server)
    return spec.stall_limit_ms(variables) if spec is not None else None


def enable_spec(server: ServerInfo) -> FlavorSpec | None:
    """For a server with the pool off: which implementation it could turn on."""
    if server.pool_kind is None and percona_plugin_only(server):
        return PERCONA_PLUGIN
    kind = server.pool_kind or ENABLE_KIND_BY_FLAVOR.get(server.flavor)
    return SPECS[kind] if kind else None


def percona_plugin_only(server: ServerInfo) -> bool:
    """A Percona 9.7.2+ build without its built-in pool (none of its variables listed): the only
    pool it can turn on is MySQL's thread_pool plugin."""
    return (
        server.flavor == "percona"
        and server.version_tuple >= PERCONA_PLUGIN_SINCE
        and not server.percona_builtin_pool
    )


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
