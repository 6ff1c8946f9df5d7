"""information_schema.THREAD_POOL_QUEUES joined to PROCESSLIST: who is waiting, for how long, with what SQL."""

from __future__ import annotations

from dataclasses import dataclass

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    as_float,
    needs_pool_table,
    sample,
)
from poolscope.schemas import QueuedConnection, ServerInfo

# A burst can queue thousands of connections; the UI needs the longest waiters, and the totals
# (computed over every row by the window functions) stay exact.
MAX_LISTED = 200
MAX_SQL_CHARS = 2048
# THREAD_POOL_QUEUES.PRIORITY is the index of the group's queue: 0 high, 1 low.
PRIORITIES = {0: "high", 1: "low"}


@dataclass
class QueueSection:
    total: int
    wait_max_ms: float | None
    wait_avg_ms: float | None
    listed: list[QueuedConnection]


class ThreadPoolQueues(Collector):
    name = "thread_pool_queues"
    help = "Queued connections with queueing time, user, db and SQL (SQL of others needs PROCESS)."

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_QUEUES")

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT q.GROUP_ID, q.POSITION, q.PRIORITY, q.CONNECTION_ID, q.QUEUEING_TIME_MICROSECONDS,"
            " p.USER, p.HOST, p.DB, p.COMMAND, p.TIME_MS, p.STATE,"
            f" LEFT(p.INFO, {MAX_SQL_CHARS}) AS INFO,"
            " COUNT(*) OVER () AS TOTAL, MAX(q.QUEUEING_TIME_MICROSECONDS) OVER () AS WAIT_MAX_US,"
            " AVG(q.QUEUEING_TIME_MICROSECONDS) OVER () AS WAIT_AVG_US"
            " FROM information_schema.THREAD_POOL_QUEUES q"
            " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = q.CONNECTION_ID"
            f" ORDER BY q.QUEUEING_TIME_MICROSECONDS DESC LIMIT {MAX_LISTED}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        listed = [
            QueuedConnection(
                group_id=int(row["group_id"]),
                position=int(row["position"]),
                priority=PRIORITIES.get(int(row["priority"]), str(row["priority"])),
                connection_id=int(row["connection_id"]),
                queueing_time_ms=float(row["queueing_time_microseconds"]) / 1000.0,
                user=row["user"],
                host=row["host"],
                db=row["db"],
                command=row["command"],
                time_s=None if row["time_ms"] is None else float(row["time_ms"]) / 1000.0,
                state=row["state"],
                info=row["info"],
            )
            for row in rows
        ]
        first = rows[0] if rows else None
        total = int(first["total"]) if first else 0
        wait_max = as_float(first["wait_max_us"]) if first else None
        wait_avg = as_float(first["wait_avg_us"]) if first else None
        section = QueueSection(
            total=total,
            wait_max_ms=None if wait_max is None else wait_max / 1000.0,
            wait_avg_ms=None if wait_avg is None else wait_avg / 1000.0,
            listed=listed,
        )
        # An empty queue waits 0 ms: a gap in the chart would read as "no data".
        samples = [
            sample("tp_queued_connections", float(total)),
            sample("tp_queue_wait_max_ms", section.wait_max_ms or 0.0),
            sample("tp_queue_wait_avg_ms", section.wait_avg_ms or 0.0),
        ]
        return CollectorOutput(section=section, samples=samples)
