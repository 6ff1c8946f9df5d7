"""information_schema.THREAD_POOL_QUEUES aggregated per group: how many wait, the oldest, the mean.

Counted over every queued request, however many, in a handful of rows: a burst of thousands of
queued connections costs the poller one row per group, not one per connection. The longest
waiters themselves are listed by thread_pool_queues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    needs_pool_table,
    sample,
)
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# The whole-pool queue series: MySQL Enterprise's and Percona's collectors feed them too.
QUEUED_CONNECTIONS = Metric(
    "tp_queued_connections",
    "connections waiting in the pool's queues (THREAD_POOL_QUEUES rows; Percona 8.4.10+ Threadpool_requests_waiting_in_*)",
    prometheus="poolscope_tp_queued_connections",
)
QUEUE_WAIT_MAX = Metric("tp_queue_wait_max_ms", "longest queueing time of a queued request", unit="ms")
METRICS = (
    QUEUED_CONNECTIONS,
    QUEUE_WAIT_MAX,
    Metric("tp_queue_wait_avg_ms", "mean queueing time of the queued requests", unit="ms"),
)


@dataclass
class QueueSummary:
    total: int = 0
    wait_max_ms: float | None = None
    wait_avg_ms: float | None = None
    oldest_ms_by_group: dict[int, float] = field(default_factory=dict)


class ThreadPoolQueueSummary(Collector[QueueSummary]):
    name = "thread_pool_queue_summary"
    help = "Queued requests per group: count, oldest and mean queueing time, over all of them."
    metrics = METRICS

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_QUEUES")

    def sql(self, server: ServerInfo) -> str:
        # The table has no TEXT column: the GROUP BY runs in an in-memory temporary table.
        return (
            "SELECT GROUP_ID, COUNT(*) AS QUEUED, MAX(QUEUEING_TIME_MICROSECONDS) AS OLDEST_US,"
            " SUM(QUEUEING_TIME_MICROSECONDS) AS TOTAL_US"
            " FROM information_schema.THREAD_POOL_QUEUES GROUP BY GROUP_ID"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[QueueSummary]:
        return _parse(rows)

    def put(self, outputs: PollOutputs, section: QueueSummary) -> None:
        outputs.thread_pool_queue_summary = section


def _parse(rows: list[Row]) -> CollectorOutput[QueueSummary]:
    summary = QueueSummary(
        total=sum(int(row["queued"]) for row in rows),
        oldest_ms_by_group={int(row["group_id"]): float(row["oldest_us"]) / 1000.0 for row in rows},
    )
    if summary.total:
        summary.wait_max_ms = max(summary.oldest_ms_by_group.values())
        summary.wait_avg_ms = sum(float(row["total_us"]) for row in rows) / 1000.0 / summary.total
    # An empty queue waits 0 ms: a gap in the chart would read as "no data".
    samples = [
        sample("tp_queued_connections", float(summary.total)),
        sample("tp_queue_wait_max_ms", summary.wait_max_ms or 0.0),
        sample("tp_queue_wait_avg_ms", summary.wait_avg_ms or 0.0),
    ]
    return CollectorOutput(section=summary, samples=samples)
