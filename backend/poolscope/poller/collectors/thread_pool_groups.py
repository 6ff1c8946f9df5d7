"""information_schema.THREAD_POOL_GROUPS: per-group threads and queue length (MariaDB >= 10.5)."""

from __future__ import annotations

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
from poolscope.schemas import GroupState, Sample, ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

GAUGES = {
    "connections": "tp_group_connections",
    "threads": "tp_group_threads",
    "active_threads": "tp_group_active_threads",
    "standby_threads": "tp_group_standby_threads",
    "queue_length": "tp_group_queue_length",
}

METRICS = (
    Metric(
        "tp_group_connections",
        "THREAD_POOL_GROUPS.CONNECTIONS",
        labels=("group",),
        prometheus="poolscope_tp_group_connections",
    ),
    Metric(
        "tp_group_threads",
        "THREAD_POOL_GROUPS.THREADS",
        labels=("group",),
        prometheus="poolscope_tp_group_threads",
    ),
    Metric(
        "tp_group_active_threads",
        "THREAD_POOL_GROUPS.ACTIVE_THREADS",
        labels=("group",),
        agg="max",
        prometheus="poolscope_tp_group_active_threads",
    ),
    Metric(
        "tp_group_standby_threads",
        "THREAD_POOL_GROUPS.STANDBY_THREADS",
        labels=("group",),
        prometheus="poolscope_tp_group_standby_threads",
    ),
    Metric(
        "tp_group_queue_length",
        "THREAD_POOL_GROUPS.QUEUE_LENGTH",
        labels=("group",),
        agg="max",
        prometheus="poolscope_tp_group_queue_length",
    ),
)


class ThreadPoolGroups(Collector[list[GroupState]]):
    name = "thread_pool_groups"
    help = "Per-group connections, threads, queue length and the listener/stall flags."
    metrics = METRICS

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_GROUPS")

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT GROUP_ID, CONNECTIONS, THREADS, ACTIVE_THREADS, STANDBY_THREADS, QUEUE_LENGTH,"
            " HAS_LISTENER, IS_STALLED FROM information_schema.THREAD_POOL_GROUPS"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[GroupState]]:
        # New models every poll: derive.py sets this poll's verdicts and rates on them.
        groups: list[GroupState] = []
        samples: list[Sample] = []
        for row in sorted(rows, key=lambda r: int(r["group_id"])):
            group = GroupState(
                group_id=int(row["group_id"]),
                connections=int(row["connections"]),
                threads=int(row["threads"]),
                active_threads=int(row["active_threads"]),
                standby_threads=int(row["standby_threads"]),
                queue_length=int(row["queue_length"]),
                has_listener=bool(row["has_listener"]),
                is_stalled=bool(row["is_stalled"]),
            )
            groups.append(group)
            label = str(group.group_id)
            for field_name, metric in GAUGES.items():
                samples.append(sample(metric, float(getattr(group, field_name)), group=label))
        return CollectorOutput(section=groups, samples=samples)

    def put(self, outputs: PollOutputs, section: list[GroupState]) -> None:
        outputs.thread_pool_groups = section
