"""information_schema.THREAD_POOL_STATS: per-group monotonic counters turned into rates."""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
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

COUNTERS = (
    "thread_creations",
    "thread_creations_due_to_stall",
    "wakes",
    "wakes_due_to_stall",
    "throttles",
    "stalls",
    "polls_by_listener",
    "polls_by_worker",
    "dequeues_by_listener",
    "dequeues_by_worker",
)

SQL = "SELECT GROUP_ID, {} FROM information_schema.THREAD_POOL_STATS ORDER BY GROUP_ID".format(
    ", ".join(c.upper() for c in COUNTERS)
)

METRICS = (
    Metric(
        "tp_group_stalls_per_s",
        "THREAD_POOL_STATS.STALLS rate",
        unit="per_s",
        labels=("group",),
        prometheus="poolscope_tp_group_stalls_per_second",
    ),
    Metric(
        "tp_group_dequeues_per_s",
        "THREAD_POOL_STATS dequeues rate",
        unit="per_s",
        labels=("group",),
        prometheus="poolscope_tp_group_dequeues_per_second",
    ),
    Metric(
        "tp_group_thread_creations_per_s",
        "THREAD_POOL_STATS.THREAD_CREATIONS rate",
        unit="per_s",
        labels=("group",),
        prometheus="poolscope_tp_group_thread_creations_per_second",
    ),
)


@dataclass
class GroupCounters:
    group_id: int
    raw: dict[str, int]
    rates: dict[str, float | None]
    # MySQL Enterprise only (mysql_tp_group_stats): stalled / executed statements this poll.
    stalled_query_ratio: float | None = None

    @property
    def dequeues(self) -> int:
        return self.raw["dequeues_by_listener"] + self.raw["dequeues_by_worker"]


class ThreadPoolStats(Collector[dict[int, GroupCounters]]):
    name = "thread_pool_stats"
    help = "Per-group thread creations, stalls, wakes, throttles and dequeues as per-second rates."
    metrics = METRICS

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_STATS")

    def sql(self, server: ServerInfo) -> str:
        return SQL

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[dict[int, GroupCounters]]:
        # A pool's counters move on every poll (the poller's own statements are dequeued too):
        # nothing here repeats, so it is made as directly as it can be.
        groups: dict[int, GroupCounters] = {}
        samples = []
        rates_of, now = ctx.counters.rates, ctx.now
        for row in rows:
            group_id = int(row["group_id"])
            label, key = _keys(group_id)
            values = tuple(map(int, _COUNTER_VALUES(row)))
            raw = dict(zip(COUNTERS, values, strict=True))
            rates = dict(zip(COUNTERS, rates_of(key, now, values), strict=True))
            dequeue_rate = None
            if rates["dequeues_by_listener"] is not None and rates["dequeues_by_worker"] is not None:
                dequeue_rate = rates["dequeues_by_listener"] + rates["dequeues_by_worker"]
            rates["dequeues"] = dequeue_rate
            groups[group_id] = GroupCounters(group_id=group_id, raw=raw, rates=rates)
            samples += [
                sample("tp_group_stalls_per_s", rates["stalls"], group=label),
                sample("tp_group_dequeues_per_s", dequeue_rate, group=label),
                sample("tp_group_thread_creations_per_s", rates["thread_creations"], group=label),
            ]
        return CollectorOutput(section=groups, samples=samples)

    def put(self, outputs: PollOutputs, section: dict[int, GroupCounters]) -> None:
        outputs.thread_pool_stats = section


# A row's counters in COUNTERS order, in one C call.
_COUNTER_VALUES = itemgetter(*COUNTERS)
GroupKeys = tuple[str, tuple[str, int]]
_KEYS: dict[int, GroupKeys] = {}
_MAX_KEYS = 4096  # group ids; a pool has at most a few hundred groups


def _keys(group_id: int) -> GroupKeys:
    """A group's label and the counter-memory key of its counters (CounterMemory.rates), made once per group id."""
    keys = _KEYS.get(group_id)
    if keys is None:
        if len(_KEYS) >= _MAX_KEYS:
            _KEYS.clear()
        keys = _KEYS[group_id] = (str(group_id), ("tp_stats", group_id))
    return keys
