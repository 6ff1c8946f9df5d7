"""SHOW GLOBAL VARIABLES (filtered): the pool's configuration, read every poll since it is dynamic."""

from __future__ import annotations

from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row
from poolscope.schemas import ServerInfo

NAMES = (
    "thread_handling",
    "thread_pool_size",
    "thread_pool_stall_limit",
    "thread_pool_oversubscribe",
    "thread_pool_max_threads",
    "thread_pool_idle_timeout",
    "thread_pool_prio_kickup_timer",
    "thread_pool_priority",
    "thread_pool_dedicated_listener",
    "thread_pool_exact_stats",
    "thread_pool_high_prio_mode",
    "thread_pool_high_prio_tickets",
    "max_connections",
    "extra_port",
    "extra_max_connections",
    "thread_cache_size",
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "version",
)


class GlobalVariables(Collector):
    name = "global_variables"
    help = "Thread pool, connection, thread cache and buffer pool settings."

    def sql(self, server: ServerInfo) -> str:
        names = ", ".join(f"'{n}'" for n in NAMES)
        return f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})"

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        variables = {str(row["variable_name"]): str(row["value"]) for row in rows}
        return CollectorOutput(section=variables)
