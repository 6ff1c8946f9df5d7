"""information_schema.THREAD_POOL_QUEUES: every queued request, how long it has waited, per group.

Who the connection is (user, host, db, last SQL) is joined in from the processlist section by
the poller, not in SQL (see the query shape rule in base.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    needs_pool_table,
    sample,
)
from poolscope.schemas import QueuedConnection, ServerInfo

# A burst can queue thousands of connections; each row is five integers, so reading them all
# keeps the totals exact, while the UI lists only the longest waiters.
MAX_ROWS = 20_000
MAX_LISTED = 200
# THREAD_POOL_QUEUES.PRIORITY is the index of the group's queue: 0 high, 1 low.
PRIORITIES = {0: "high", 1: "low"}


@dataclass
class QueueSection:
    total: int
    wait_max_ms: float | None
    wait_avg_ms: float | None
    oldest_ms_by_group: dict[int, float] = field(default_factory=dict)
    listed: list[QueuedConnection] = field(default_factory=list)


class ThreadPoolQueues(Collector):
    name = "thread_pool_queues"
    help = "Queued requests per group with their queueing time (who they are comes from PROCESSLIST)."

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_QUEUES")

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT GROUP_ID, POSITION, PRIORITY, CONNECTION_ID, QUEUEING_TIME_MICROSECONDS"
            f" FROM information_schema.THREAD_POOL_QUEUES LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        waits_ms = [float(row["queueing_time_microseconds"]) / 1000.0 for row in rows]
        oldest: dict[int, float] = {}
        for row, wait in zip(rows, waits_ms, strict=True):
            group_id = int(row["group_id"])
            oldest[group_id] = max(oldest.get(group_id, 0.0), wait)
        longest_first = sorted(zip(rows, waits_ms, strict=True), key=lambda pair: -pair[1])[:MAX_LISTED]
        listed = [
            QueuedConnection(
                group_id=int(row["group_id"]),
                position=int(row["position"]),
                priority=PRIORITIES.get(int(row["priority"]), str(row["priority"])),
                # NULL while a new connection's login waits in the queue.
                connection_id=int(row["connection_id"]) if row["connection_id"] is not None else None,
                queueing_time_ms=wait,
            )
            for row, wait in longest_first
        ]
        section = QueueSection(
            total=len(rows),
            wait_max_ms=max(waits_ms) if waits_ms else None,
            wait_avg_ms=sum(waits_ms) / len(waits_ms) if waits_ms else None,
            oldest_ms_by_group=oldest,
            listed=listed,
        )
        # An empty queue waits 0 ms: a gap in the chart would read as "no data".
        samples = [
            sample("tp_queued_connections", float(section.total)),
            sample("tp_queue_wait_max_ms", section.wait_max_ms or 0.0),
            sample("tp_queue_wait_avg_ms", section.wait_avg_ms or 0.0),
        ]
        return CollectorOutput(section=section, samples=samples)
