"""information_schema.THREAD_POOL_STATS: per-group monotonic counters turned into rates."""

from __future__ import annotations

from dataclasses import dataclass
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

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        # The last read's rows, each group's counters as read, and the rates and output they gave.
        self._rows: list[Row] | None = None
        self._read: list[tuple[int, dict[str, int]]] = []
        self._rates: list[list[float | None]] | None = None
        self._output: CollectorOutput[dict[int, GroupCounters]] | None = None

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[dict[int, GroupCounters]]:
        if rows != self._rows:
            self._read = [(int(row["group_id"]), {name: int(row[name]) for name in COUNTERS}) for row in rows]
            self._rows = [dict(row) for row in rows]  # a copy: the caller's rows are not ours to keep
            self._output = None  # its raw counters are the last read's
        rate, now = ctx.counters.rate, ctx.now
        # Every counter's rate is taken every poll (the counter memory moves on with the clock);
        # when they are the last poll's rates (an idle pool's zeros) of the same counters, so is
        # the output. Its section is only read downstream (derive.py), never changed.
        rates = [[rate(key, now, raw[name]) for key, name in _keys(group_id)] for group_id, raw in self._read]
        if self._output is None or rates != self._rates:
            self._output = _output(self._read, rates)
            self._rates = rates
        return CollectorOutput(section=self._output.section, samples=list(self._output.samples))

    def put(self, outputs: PollOutputs, section: dict[int, GroupCounters]) -> None:
        outputs.thread_pool_stats = section


_KEYS: dict[int, tuple[tuple[tuple[str, int, str], str], ...]] = {}
_MAX_KEYS = 4096  # group ids; a pool has at most a few hundred groups


def _keys(group_id: int) -> tuple[tuple[tuple[str, int, str], str], ...]:
    """A group's counter-memory keys, each with its counter's name (made once per group id)."""
    keys = _KEYS.get(group_id)
    if keys is None:
        if len(_KEYS) >= _MAX_KEYS:
            _KEYS.clear()
        keys = _KEYS[group_id] = tuple((("tp_stats", group_id, name), name) for name in COUNTERS)
    return keys


def _output(
    read: list[tuple[int, dict[str, int]]], rates_read: list[list[float | None]]
) -> CollectorOutput[dict[int, GroupCounters]]:
    groups: dict[int, GroupCounters] = {}
    samples = []
    for (group_id, raw), group_rates in zip(read, rates_read, strict=True):
        rates = dict(zip(COUNTERS, group_rates, strict=True))
        dequeue_rate = None
        if rates["dequeues_by_listener"] is not None and rates["dequeues_by_worker"] is not None:
            dequeue_rate = rates["dequeues_by_listener"] + rates["dequeues_by_worker"]
        rates["dequeues"] = dequeue_rate
        groups[group_id] = GroupCounters(group_id=group_id, raw=raw, rates=rates)
        label = str(group_id)
        samples += [
            sample("tp_group_stalls_per_s", rates["stalls"], group=label),
            sample("tp_group_dequeues_per_s", dequeue_rate, group=label),
            sample("tp_group_thread_creations_per_s", rates["thread_creations"], group=label),
        ]
    return CollectorOutput(section=groups, samples=samples)
