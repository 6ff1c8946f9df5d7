"""What a server is, from the rows read once on connect: flavor, version, pool, capabilities.

Pure functions over the discovery rows, shared by the live connection (poller/connection.py)
and anything else that answers the same two statements.
"""

from __future__ import annotations

import re
from typing import Any

from poolscope import flavors
from poolscope.enable_pool import RDS_SWITCH, how_to_enable
from poolscope.poller.collectors.base import PERFORMANCE_SCHEMA_SELECT
from poolscope.schemas import AdminPortKind, Flavor, ServerInfo
from poolscope.values import int_or_none
from poolscope.variables import NAMES as VARIABLE_NAMES

POOL_TABLES = ("THREAD_POOL_GROUPS", "THREAD_POOL_QUEUES", "THREAD_POOL_STATS", "THREAD_POOL_WAITS")
MYSQL_TP_TABLES = ("tp_thread_group_state", "tp_thread_group_stats", "tp_thread_state")
# Percona 9.7's compat build: the plugin runs, Percona's variables stay (poolscope/flavors.py).
PERCONA_COMPAT_NOTE = (
    "MySQL's thread_pool plugin runs on a Percona build that keeps Percona's own pool variables:"
    " thread_pool_stall_limit is Percona's, in ms, and the plugin acts on it in 10 ms steps from"
    " 40 ms to 6 s; thread_pool_size is read once, at start; thread_pool_oversubscribe, _max_threads,"
    " _idle_timeout and _high_prio_* belong to the built-in pool and do not act on the plugin."
)


def parse_version(version: str) -> tuple[int, int, int]:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        return (0, 0, 0)
    major, minor, patch = (int(x) for x in match.groups())
    return (major, minor, patch)


def detect_flavor(version: str, version_comment: str) -> Flavor:
    text = f"{version} {version_comment}".lower()
    if "mariadb" in text:
        return "mariadb"
    if "alisql" in text:
        return "alisql"
    if "percona" in text:
        return "percona"
    if "mysql" in text or re.match(r"\d+\.\d+\.\d+", version):
        return "mysql"
    return "unknown"


def discovery_statements() -> list[str]:
    """What is read once on connect to decide what the server is and which collectors apply."""
    wanted = ("version_comment", "admin_address", "performance_schema", *VARIABLE_NAMES)
    names = ", ".join(f"'{n}'" for n in wanted)
    tables = ", ".join(f"'{t}'" for t in (*POOL_TABLES, *MYSQL_TP_TABLES))
    return [
        f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})",
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
        f" WHERE TABLE_NAME IN ({tables}) AND TABLE_SCHEMA IN ('information_schema', 'performance_schema')",
    ]


def server_from_discovery(
    variable_rows: list[dict[str, Any]], table_rows: list[dict[str, Any]]
) -> ServerInfo:
    """Flavor, version, pool implementation and what can be read, from the discovery rows.

    Never fails on an unknown server: what cannot be identified is read as far as it goes and
    the reason is put in `notes`.
    """
    variables = {str(r["variable_name"]): str(r["value"]) for r in variable_rows}
    tables = {str(r["table_name"]) for r in table_rows}
    version = variables.get("version", "")
    version_comment = variables.get("version_comment", "")
    version_tuple = parse_version(version)
    flavor = detect_flavor(version, version_comment)
    thread_handling = variables.get("thread_handling", "one-thread-per-connection")
    pool_kind, grant_needed, notes = _pool_kind(flavor, thread_handling, variables, tables)
    if flavor == "unknown":
        notes.append(
            f"Could not tell the server's flavor from @@version {version!r} / @@version_comment "
            f"{version_comment!r}: reading what it offers."
        )
    if version_tuple == (0, 0, 0):
        notes.append(f"Could not parse the version {version!r}: version-dependent sources are skipped.")
    exact = variables.get("thread_pool_exact_stats")
    exact_stats = None if exact is None else exact.upper() == "ON"
    admin_address = variables.get("admin_address", "")
    rds_switch = variables.get(RDS_SWITCH)
    pool_enabled = pool_kind is not None or (rds_switch is None and thread_handling == "pool-of-threads")
    server = ServerInfo(
        flavor=flavor,
        version=version,
        version_tuple=version_tuple,
        thread_handling=thread_handling,
        pool_enabled=pool_enabled,
        pool_tables=sorted(tables),
        exact_stats=exact_stats,
        queue_time_mode=None if exact_stats is None else ("exact" if exact_stats else "coarse"),
        extra_port=int_or_none(variables.get("extra_port")) or 0,
        # The MySQL admin interface exists only when admin_address is set.
        admin_port=(int_or_none(variables.get("admin_port")) or 0) if admin_address else 0,
        pool_kind=pool_kind,
        percona_builtin_pool=flavor == "percona" and flavors.lists_percona_pool(variables),
        pool_grant_needed=grant_needed,
        edition=version_comment or None,
        performance_schema=_on_off(variables.get("performance_schema")),
        known_variables=[n for n in VARIABLE_NAMES if n in variables],
        notes=notes,
    )
    if server.pool_kind == "mysql_enterprise" and server.percona_builtin_pool:
        server.notes.append(PERCONA_COMPAT_NOTE)
    spec = flavors.flavor_spec(server)
    if spec is not None and not spec.size.dynamic:
        server.startup_pool_size = int_or_none(variables.get(spec.size.name))
    server.capabilities = capabilities(server)
    if not server.pool_enabled:
        server.enable_hint, server.enable_snippet = how_to_enable(
            flavor, version_tuple, server.edition, rds_switch is not None, flavors.percona_plugin_only(server)
        )
    note = flavors.version_note(server)
    if note:
        server.notes.append(note)
    return server


def _pool_kind(
    flavor: Flavor, thread_handling: str, variables: dict[str, str], tables: set[str]
) -> tuple[flavors.PoolKind | None, str | None, list[str]]:
    """Which pool runs, the GRANT it needs to be read (None: readable), and notes on how it was told."""
    notes: list[str] = []
    percona_variables = "thread_pool_high_prio_mode" in variables
    rds_switch = variables.get(RDS_SWITCH)
    if tables & set(MYSQL_TP_TABLES) or thread_handling == "loaded-dynamically":
        # The plugin sets thread_handling=loaded-dynamically when it initialises (MySQL manual,
        # "Thread Pool Installation"); its tp_* tables are invisible without SELECT on them.
        if tables & set(MYSQL_TP_TABLES):
            return "mysql_enterprise", None, notes
        notes.append(
            "thread_handling=loaded-dynamically: the thread_pool plugin is running, but this user cannot "
            f"see its performance_schema.tp_* tables. GRANT {PERFORMANCE_SCHEMA_SELECT} to read the pool."
        )
        return "mysql_enterprise", PERFORMANCE_SCHEMA_SELECT, notes
    if rds_switch is not None:
        notes.append(
            f"{RDS_SWITCH}={rds_switch}: an Alibaba Cloud RDS / AliSQL thread pool, switched by "
            f"{RDS_SWITCH} (thread_handling has no effect there); read as a Percona-derived pool "
            "(Threadpool_* status where the server has it, no per-group data)."
        )
        return ("percona" if rds_switch.upper() in ("ON", "1") else None), None, notes
    if thread_handling != "pool-of-threads":
        return None, None, notes
    if flavor == "mariadb" or ("THREAD_POOL_GROUPS" in tables and not percona_variables):
        return "mariadb", None, notes
    if flavor in ("percona", "alisql") or percona_variables:
        if flavor not in ("percona", "alisql"):
            notes.append(
                f"Percona-compatible thread pool variables (thread_pool_high_prio_mode) on a {flavor} "
                "server: read as a Percona-derived pool (status Threadpool_*, no per-group data)."
            )
        return "percona", None, notes
    notes.append(
        "thread_handling=pool-of-threads, but neither MariaDB's THREAD_POOL_* tables nor "
        "Percona's variables were found: only server-wide threads and throughput are shown."
    )
    return None, None, notes


def capabilities(server: ServerInfo, status_names: frozenset[str] = frozenset()) -> list[str]:
    """What the UI may offer; `status_names`: the Threadpool_* status this server reported."""
    tables = set(server.pool_tables)
    caps: list[str] = []
    if server.pool_kind == "mariadb":
        for table, cap in (
            ("THREAD_POOL_GROUPS", flavors.CAP_GROUPS),
            ("THREAD_POOL_STATS", flavors.CAP_GROUP_STATS),
            ("THREAD_POOL_QUEUES", flavors.CAP_QUEUE_ENTRIES),
            ("THREAD_POOL_WAITS", flavors.CAP_WAITS),
        ):
            if table in tables:
                caps.append(cap)
        caps.append(flavors.CAP_POOL_THREADS)
    elif server.pool_kind == "percona":
        caps.append(flavors.CAP_POOL_THREADS)
        # By what the server reports, not by version: the statistics arrived in 8.4.10-10.
        if status_names & set(flavors.PERCONA_QUEUE_WAIT_STATUS):
            caps.append(flavors.CAP_QUEUE_WAIT_STATS)
        if status_names & set(flavors.PERCONA_QUEUE_DEPTH_STATUS.values()):
            caps.append(flavors.CAP_QUEUE_DEPTH)
    elif server.pool_kind == "mysql_enterprise":
        if "tp_thread_group_state" in tables:
            caps.append(flavors.CAP_GROUPS)
        if "tp_thread_group_stats" in tables:
            caps += [flavors.CAP_GROUP_STATS, flavors.CAP_WAITS]
    return caps


def admin_port_of(server: ServerInfo) -> tuple[AdminPortKind, int]:
    """The port outside the pool this server offers, and what it is called there (0 = none)."""
    variable = flavors.admin_port_variable(server.flavor, server.version_tuple)
    if variable == "admin_port":
        return "admin_port", server.admin_port
    # Servers we cannot place still get extra_port when they report one.
    return "extra_port", server.extra_port


def _on_off(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.upper() in ("ON", "1", "YES", "TRUE")
