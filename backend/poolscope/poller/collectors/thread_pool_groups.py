"""information_schema.THREAD_POOL_GROUPS: per-group threads and queue length (MariaDB >= 10.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from poolscope.analysis.last_made import Unvalidated
from poolscope.metrics import Metric
from poolscope.poller.collectors.base import CollectorOutput, Row, RowsOnly, needs_pool_table, sample
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


class ThreadPoolGroups(RowsOnly[list[GroupState], list[dict[str, Any]]]):
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

    # What a read keeps is each group's fields and the samples: an idle pool's groups read the
    # same poll after poll, and equal rows give equal fields and samples (every field is int() or
    # bool() of its column), so only the models are made again.
    def read(self, rows: list[Row]) -> CollectorOutput[list[dict[str, Any]]]:
        return _read(rows)

    def hand_out(self, kept: CollectorOutput[list[dict[str, Any]]]) -> CollectorOutput[list[GroupState]]:
        return _groups(kept)

    def put(self, outputs: PollOutputs, section: list[GroupState]) -> None:
        outputs.thread_pool_groups = section


# Of the fields _read makes, always all of them (Unvalidated.maker).
_GROUP = Unvalidated(GroupState).maker(
    "group_id",
    "connections",
    "threads",
    "active_threads",
    "standby_threads",
    "queue_length",
    "has_listener",
    "is_stalled",
)


def _groups(read: CollectorOutput[list[dict[str, Any]]]) -> CollectorOutput[list[GroupState]]:
    # New models every poll: derive.py sets this poll's verdicts and rates on them. Not validated
    # again: the fields are the ints and bools _read made.
    return CollectorOutput(section=[_GROUP(**fields) for fields in read.section], samples=read.samples)


def _read(rows: list[Row]) -> CollectorOutput[list[dict[str, Any]]]:
    fields: list[dict[str, Any]] = []
    samples: list[Sample] = []
    for row in sorted(rows, key=lambda r: int(r["group_id"])):
        group = {
            "group_id": int(row["group_id"]),
            "connections": int(row["connections"]),
            "threads": int(row["threads"]),
            "active_threads": int(row["active_threads"]),
            "standby_threads": int(row["standby_threads"]),
            "queue_length": int(row["queue_length"]),
            "has_listener": bool(row["has_listener"]),
            "is_stalled": bool(row["is_stalled"]),
        }
        fields.append(group)
        label = str(group["group_id"])
        for field_name, metric in GAUGES.items():
            samples.append(sample(metric, float(group[field_name]), group=label))
    return CollectorOutput(section=fields, samples=samples)
