"""The variables rules talk about, per flavor: pool settings from poolscope.flavors (the one table
of names, units and ranges), plus the server-wide ones every flavor names alike.

Rules speak of logical settings ("stall_limit"); `spec(server, key)` says what this server calls
it, in which unit, and whether it can change live, or None when the flavor has no such setting.
"""

from __future__ import annotations

from collections.abc import Callable

from poolscope.flavors import FlavorSpec, VariableSpec, enable_spec, flavor_spec
from poolscope.schemas import ServerInfo

#: Pool settings: each flavor's own variable (poolscope.flavors), None where the flavor has none.
_POOL: dict[str, Callable[[FlavorSpec], VariableSpec | None]] = {
    "pool_size": lambda pool: pool.size,
    "stall_limit": lambda pool: pool.stall_limit,
    "max_threads": lambda pool: pool.max_threads,
    "oversubscribe": lambda pool: pool.oversubscribe,
    # Priority for open transactions: Percona/AliSQL's mode, else MariaDB's thread_pool_priority.
    "priority": lambda pool: pool.high_prio_mode or pool.priority,
    "prio_kickup_timer": lambda pool: pool.prio_kickup_timer,
}

#: Server-wide settings: same name wherever the variable exists (the rule checks it does).
_SERVER_WIDE: dict[str, VariableSpec] = {
    "exact_stats": VariableSpec("thread_pool_exact_stats", default="OFF"),  # MariaDB only
    "thread_cache_size": VariableSpec("thread_cache_size"),
    "max_connections": VariableSpec("max_connections", default="151"),
    "extra_max_connections": VariableSpec("extra_max_connections", default="1"),  # MariaDB, Percona 5.7
    "thread_handling": VariableSpec("thread_handling", dynamic=False, default="one-thread-per-connection"),
}


def spec(server: ServerInfo, key: str) -> VariableSpec | None:
    """This server's variable for a logical setting (None: the flavor has no such setting)."""
    if key in _POOL:
        pool = flavor_spec(server) or enable_spec(server)
        return _POOL[key](pool) if pool else None
    return _SERVER_WIDE.get(key)


#: The option-file section a snippet goes in.
CONFIG_SECTION = {"mariadb": "mariadb"}


def config_snippet(flavor: str, variable: str, value: str) -> str:
    section = CONFIG_SECTION.get(flavor, "mysqld")
    return f"[{section}]\n{variable} = {value}\n"


def supports_set_persist(flavor: str, version: tuple[int, int, int]) -> bool:
    return flavor in ("mysql", "percona") and version >= (8, 0, 0)
