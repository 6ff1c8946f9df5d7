"""Per-flavor names, units and restart needs of the variables rules talk about: one table to extend.

Rules speak of logical settings ("stall_limit"); this table says what each flavor calls it, in
which unit, and whether it can change live. A flavor missing a setting maps it to None.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VarSpec:
    name: str
    unit: str | None = None
    # For durations: how many milliseconds one native unit is (MySQL Enterprise: 10 ms).
    ms_per_unit: float | None = None
    dynamic: bool = True
    default: str | None = None

    def to_ms(self, native: str | float) -> float:
        return float(native) * (self.ms_per_unit or 1.0)

    def from_ms(self, ms: float) -> str:
        return str(max(1, round(ms / (self.ms_per_unit or 1.0))))


_MARIADB: dict[str, VarSpec | None] = {
    "pool_size": VarSpec("thread_pool_size", default="CPUs"),
    "stall_limit": VarSpec("thread_pool_stall_limit", unit="ms", ms_per_unit=1, default="500"),
    "max_threads": VarSpec("thread_pool_max_threads", default="65536"),
    "oversubscribe": VarSpec("thread_pool_oversubscribe", default="3"),
    "priority": VarSpec("thread_pool_priority", default="auto"),
    "prio_kickup_timer": VarSpec("thread_pool_prio_kickup_timer", unit="ms", ms_per_unit=1, default="1000"),
    "exact_stats": VarSpec("thread_pool_exact_stats", default="OFF"),
    "thread_cache_size": VarSpec("thread_cache_size"),
    "max_connections": VarSpec("max_connections", default="151"),
    "extra_max_connections": VarSpec("extra_max_connections", default="1"),
    "thread_handling": VarSpec("thread_handling", dynamic=False, default="one-thread-per-connection"),
}

_PERCONA: dict[str, VarSpec | None] = {
    **_MARIADB,
    "priority": VarSpec("thread_pool_high_prio_mode", default="transactions"),
    "exact_stats": None,
    "max_threads": VarSpec("thread_pool_max_threads", default="100000"),
    "stall_limit": VarSpec("thread_pool_stall_limit", unit="ms", ms_per_unit=1, default="500"),
}

# MySQL Enterprise's thread_pool plugin: stall_limit counts 10 ms units, size is startup-only,
# no max_threads/oversubscribe/exact_stats, the pool is a plugin (no thread_handling switch).
_MYSQL: dict[str, VarSpec | None] = {
    "pool_size": VarSpec("thread_pool_size", dynamic=False, default="16"),
    "stall_limit": VarSpec("thread_pool_stall_limit", unit="× 10 ms", ms_per_unit=10, default="6"),
    "max_threads": None,
    "oversubscribe": None,
    "priority": None,
    "prio_kickup_timer": VarSpec("thread_pool_prio_kickup_timer", unit="ms", ms_per_unit=1, default="1000"),
    "exact_stats": None,
    "thread_cache_size": VarSpec("thread_cache_size"),
    "max_connections": VarSpec("max_connections", default="151"),
    "extra_max_connections": None,
    "thread_handling": None,
}

FLAVOR_VARIABLES: dict[str, dict[str, VarSpec | None]] = {
    "mariadb": _MARIADB,
    "percona": _PERCONA,
    "alisql": _PERCONA,
    "mysql": _MYSQL,
    "mysql_enterprise": _MYSQL,
}

#: The option-file section a snippet goes in.
CONFIG_SECTION = {"mariadb": "mariadb"}


def spec(flavor: str, key: str) -> VarSpec | None:
    """The flavor's variable for a logical setting; unknown flavors are read like MariaDB."""
    return FLAVOR_VARIABLES.get(flavor, _MARIADB).get(key)


def config_snippet(flavor: str, variable: str, value: str) -> str:
    section = CONFIG_SECTION.get(flavor, "mysqld")
    return f"[{section}]\n{variable} = {value}\n"


def supports_set_persist(flavor: str, version: tuple[int, int, int]) -> bool:
    return flavor in ("mysql", "mysql_enterprise", "percona") and version >= (8, 0, 0)
