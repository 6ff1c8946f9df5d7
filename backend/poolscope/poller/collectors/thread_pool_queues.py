"""information_schema.THREAD_POOL_QUEUES: the longest-waiting queued requests, listed.

Only the MAX_LISTED longest waiters are read (the server sorts them): during a burst the queue
can hold thousands of requests, and reading them all every second would cost the poller the
most exactly when it is needed. Their count and waits over all of them come from
thread_pool_queue_summary. Who each connection is (user, host, db, last SQL) is joined in from
the processlist by the poller, not in SQL (see the query shape rule in base.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    needs_pool_table,
)
from poolscope.schemas import QueuedConnection, ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

MAX_LISTED = 200
# THREAD_POOL_QUEUES.PRIORITY is the index of the group's queue: 0 high, 1 low.
PRIORITIES = {0: "high", 1: "low"}


class ThreadPoolQueues(Collector[list[QueuedConnection]]):
    name = "thread_pool_queues"
    help = (
        "The longest-waiting queued requests and their queueing time (who they are comes from PROCESSLIST)."
    )

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_QUEUES")

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT GROUP_ID, POSITION, PRIORITY, CONNECTION_ID, QUEUEING_TIME_MICROSECONDS"
            " FROM information_schema.THREAD_POOL_QUEUES"
            f" ORDER BY QUEUEING_TIME_MICROSECONDS DESC LIMIT {MAX_LISTED}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[QueuedConnection]]:
        listed = [
            QueuedConnection(
                group_id=int(row["group_id"]),
                position=int(row["position"]),
                priority=PRIORITIES.get(int(row["priority"]), str(row["priority"])),
                # NULL while a new connection's login waits in the queue.
                connection_id=int(row["connection_id"]) if row["connection_id"] is not None else None,
                queueing_time_ms=float(row["queueing_time_microseconds"]) / 1000.0,
            )
            for row in rows
        ]
        # Replayed captures are not sorted by the server.
        listed.sort(key=lambda entry: -entry.queueing_time_ms)
        return CollectorOutput(section=listed[:MAX_LISTED])

    def put(self, outputs: PollOutputs, section: list[QueuedConnection]) -> None:
        outputs.thread_pool_queues = section
