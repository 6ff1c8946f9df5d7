"""information_schema.THREAD_POOL_GROUPS: per-group threads and queue length (MariaDB >= 10.5)."""

from __future__ import annotations

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    as_float,
    needs_pool_table,
    sample,
)
from poolscope.schemas import GroupState, ServerInfo

GAUGES = {
    "connections": "tp_group_connections",
    "threads": "tp_group_threads",
    "active_threads": "tp_group_active_threads",
    "standby_threads": "tp_group_standby_threads",
    "queue_length": "tp_group_queue_length",
}


class ThreadPoolGroups(Collector):
    name = "thread_pool_groups"
    help = "Per-group connections, threads, queue length and the listener/stall flags."

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_GROUPS")

    def sql(self, server: ServerInfo) -> str:
        # The per-group oldest wait is folded in here so it covers every group, not only the
        # rows the (limited) queue listing returns.
        return (
            "SELECT g.GROUP_ID, g.CONNECTIONS, g.THREADS, g.ACTIVE_THREADS, g.STANDBY_THREADS,"
            " g.QUEUE_LENGTH, g.HAS_LISTENER, g.IS_STALLED, q.OLDEST_US"
            " FROM information_schema.THREAD_POOL_GROUPS g"
            " LEFT JOIN (SELECT GROUP_ID, MAX(QUEUEING_TIME_MICROSECONDS) AS OLDEST_US"
            "  FROM information_schema.THREAD_POOL_QUEUES GROUP BY GROUP_ID) q"
            " ON q.GROUP_ID = g.GROUP_ID ORDER BY g.GROUP_ID"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        groups: list[GroupState] = []
        samples = []
        for row in rows:
            oldest_us = as_float(row["oldest_us"])
            group = GroupState(
                group_id=int(row["group_id"]),
                connections=int(row["connections"]),
                threads=int(row["threads"]),
                active_threads=int(row["active_threads"]),
                standby_threads=int(row["standby_threads"]),
                queue_length=int(row["queue_length"]),
                has_listener=bool(row["has_listener"]),
                is_stalled=bool(row["is_stalled"]),
                oldest_queued_ms=None if oldest_us is None else oldest_us / 1000.0,
            )
            groups.append(group)
            label = str(group.group_id)
            for field_name, metric in GAUGES.items():
                samples.append(sample(metric, float(getattr(group, field_name)), group=label))
        return CollectorOutput(section=groups, samples=samples)
