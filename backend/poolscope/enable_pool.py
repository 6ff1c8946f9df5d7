"""How each flavor and version turns its thread pool on, as a config snippet that version accepts.

A snippet pasted into my.cnf that names a variable the server lacks stops mysqld at start-up
("unknown variable"), and a value outside a variable's list does the same. So every line here is
tied to the versions that have it, and tests/flavors/test_enable_snippets.py checks each snippet
against that version's documented options (tests/fixtures/server-options/, sources cited there):

- MariaDB: thread_handling=pool-of-threads (restart), thread_pool_exact_stats (10.5+), extra_port.
- Percona < 8.0.14 (5.7): the same switch, thread_pool_high_prio_mode, extra_port.
- Percona 8.0.14+: extra_port is gone; MySQL's admin_address + admin_port replace it.
- Percona 9.7.2+ that lists none of its built-in pool's variables: only MySQL's thread_pool
  plugin is left (psmysql-docs says 9.7.2-2 removes them), so plugin-load-add, never
  pool-of-threads or thread_pool_high_prio_mode. A 9.7 build that still lists them keeps the
  built-in switch (poolscope/flavors.py, percona_plugin_only()).
- AliSQL 5.6/5.7: the Percona-derived switch; no admin-port line (not verified for AliSQL).
- Alibaba Cloud RDS and MySQL-8-based AliSQL: thread_pool_enabled (dynamic, no restart);
  thread_handling has no effect there and pool-of-threads is not one of its values.
- MySQL: the Enterprise thread_pool plugin (plugin-load-add), admin_address/admin_port 8.0.14+.
"""

from __future__ import annotations

from dataclasses import dataclass

from poolscope.flavors import PERCONA_PLUGIN_SINCE

# The variable Alibaba Cloud RDS (and MySQL-8-based AliSQL) switches its pool with.
RDS_SWITCH = "thread_pool_enabled"
ADMIN_PORT_SINCE = (8, 0, 14)  # MySQL's administrative interface (admin_address, admin_port)
ADMIN_PORT_LINES = (
    ("admin_address", "127.0.0.1", "admin interface outside the pool"),
    ("admin_port", "33062", ""),
)
# MariaDB and Percona 5.7's port outside the pool (before admin_port existed).
EXTRA_PORT_LINES = (("extra_port", "3307", "admin/monitoring port outside the pool"),)


@dataclass(frozen=True)
class ConfigLine:
    option: str
    value: str
    comment: str = ""


@dataclass(frozen=True)
class PoolSwitch:
    """What turns this server's pool on, whether that needs a restart, and the lines to add."""

    variable: str  # as the server (or its option file) names it
    value: str
    restart: bool
    hint: str
    lines: tuple[ConfigLine, ...]

    @property
    def snippet(self) -> str:
        width = max(len(line.option) for line in self.lines)
        out = ["[mysqld]"]
        for line in self.lines:
            text = f"{line.option.ljust(width)} = {line.value}"
            out.append(f"{text}   # {line.comment}" if line.comment else text)
        return "\n".join(out)


def _lines(*items: tuple[str, str, str]) -> tuple[ConfigLine, ...]:
    return tuple(ConfigLine(*item) for item in items)


def pool_switch(
    flavor: str, version: tuple[int, int, int], has_rds_switch: bool, plugin_only: bool = False
) -> PoolSwitch | None:
    """How a server of this flavor and version turns its pool on (None: no pool we know of).

    `has_rds_switch`: the server has thread_pool_enabled (Alibaba Cloud RDS / AliSQL 8).
    `plugin_only`: a Percona build whose only pool is MySQL's thread_pool plugin
    (flavors.percona_plugin_only()).
    """
    if flavor == "percona" and plugin_only:
        return PoolSwitch(
            variable="plugin-load-add",
            value="thread_pool.so",
            restart=True,
            hint=(
                f"Percona Server {version[0]}.{version[1]}.{version[2]} lists none of its built-in pool's"
                " variables: its pool is MySQL's thread_pool plugin, loaded at startup (restart)."
                " thread_pool_stall_limit counts 10 ms units there and thread_pool_size is startup-only."
            ),
            lines=_lines(("plugin-load-add", "thread_pool.so", ""), *ADMIN_PORT_LINES),
        )
    if has_rds_switch or (flavor == "alisql" and version >= (8, 0, 0)):
        return PoolSwitch(
            variable=RDS_SWITCH,
            value="ON",
            restart=False,
            hint=(
                "Alibaba Cloud RDS and MySQL-8-based AliSQL switch the pool with thread_pool_enabled: "
                "dynamic, no restart (on RDS set the console parameter loose_thread_pool_enabled). "
                "thread_handling has no effect there."
            ),
            lines=_lines((RDS_SWITCH, "ON", "no restart needed")),
        )
    if flavor == "mariadb":
        exact = (("thread_pool_exact_stats", "ON", ""),) if version >= (10, 5, 0) else ()
        return PoolSwitch(
            variable="thread_handling",
            value="pool-of-threads",
            restart=True,
            hint="thread_handling is read-only at runtime: set it in the server config and restart.",
            lines=_lines(
                ("thread_handling", "pool-of-threads", ""),
                *exact,
                *EXTRA_PORT_LINES,
            ),
        )
    if flavor in ("percona", "alisql"):
        if flavor == "alisql":
            admin: tuple[tuple[str, str, str], ...] = ()
        elif version >= ADMIN_PORT_SINCE:
            admin = ADMIN_PORT_LINES
        else:
            admin = EXTRA_PORT_LINES
        return PoolSwitch(
            variable="thread_handling",
            value="pool-of-threads",
            restart=True,
            hint="thread_handling is read-only at runtime: set it in my.cnf and restart."
            + (
                " This version also carries MySQL's thread_pool plugin; only one pool runs at a time"
                " and this turns on Percona's own."
                if flavor == "percona" and version >= PERCONA_PLUGIN_SINCE
                else ""
            ),
            lines=_lines(
                ("thread_handling", "pool-of-threads", ""),
                ("thread_pool_high_prio_mode", "transactions", ""),
                *admin,
            ),
        )
    if flavor == "mysql":
        return PoolSwitch(
            variable="plugin-load-add",
            value="thread_pool.so",
            restart=True,
            hint=(
                "The thread pool is an Enterprise plugin: load it at startup and restart "
                "(thread_pool_size is startup-only and defaults to 16 groups)."
            ),
            lines=_lines(
                ("plugin-load-add", "thread_pool.so", ""),
                *(ADMIN_PORT_LINES if version >= ADMIN_PORT_SINCE else ()),
            ),
        )
    return None


def how_to_enable(
    flavor: str, version: tuple[int, int, int], edition: str | None, has_rds_switch: bool, plugin_only: bool
) -> tuple[str | None, str | None]:
    """For a server with the pool off: what enabling it involves, and a config snippet
    (`plugin_only`: flavors.percona_plugin_only())."""
    switch = pool_switch(flavor, version, has_rds_switch, plugin_only)
    if switch is None:
        return None, None
    hint = switch.hint
    if flavor == "mysql" and not has_rds_switch and "enterprise" not in (edition or "").lower():
        hint = (
            "MySQL Community Server has no thread pool: it is the Enterprise thread_pool plugin "
            "(Percona Server and MariaDB ship a pool for free). " + hint
        )
    return hint, switch.snippet
