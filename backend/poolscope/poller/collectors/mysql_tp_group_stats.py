"""performance_schema.tp_thread_group_stats (MySQL Enterprise): per-group counters as rates.

Mapped onto the per-group model used for MariaDB's THREAD_POOL_STATS so rates and the stall
verdict work unchanged: QUERIES_EXECUTED plays dequeues (a statement that starts executing has
left the queue), THREADS_STARTED plays thread creations, STALLED_QUERIES_EXECUTED feeds the
stalls-per-second rate (but not the verdict, see parse).
Also derived here: the stalled-query ratio (Δ STALLED_QUERIES_EXECUTED / Δ QUERIES_EXECUTED per
poll), and wait reasons from the *_WAITS columns in the shape of MariaDB's THREAD_POOL_WAITS.
The Admin thread group's row (8.0.31+, see mysql_tp_group_state.is_admin_group) is kept out of the
groups, the ratio and the waits, and reported as section.admin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import (
    CollectorOutput,
    ParseContext,
    Row,
    sample,
)
from poolscope.poller.collectors.mysql_tp_group_state import MysqlTpCollector, group_id_of, is_admin_group
from poolscope.poller.collectors.thread_pool_stats import METRICS as STATS_METRICS
from poolscope.poller.collectors.thread_pool_stats import GroupCounters
from poolscope.poller.collectors.thread_pool_waits import WAITS_PER_S
from poolscope.schemas import AdminGroup, WaitReason

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

COUNTERS = (
    "connections_started",
    "connections_closed",
    "queries_executed",
    "queries_queued",
    "threads_started",
    "prio_kickups",
    "stalled_queries_executed",
    "become_consumer_thread",
    "become_reserve_thread",
    "become_waiting_thread",
    "wake_thread_stall_checker",
)
# *_WAITS column -> reason, named as MariaDB's THREAD_POOL_WAITS names the same wait.
WAIT_COLUMNS = {
    "sleep_waits": "SLEEP",
    "disk_io_waits": "DISKIO",
    "row_lock_waits": "ROW_LOCK",
    "global_lock_waits": "GLOBAL_LOCK",
    "meta_data_lock_waits": "META_DATA_LOCK",
    "table_lock_waits": "TABLE_LOCK",
    "user_lock_waits": "USER_LOCK",
    "binlog_waits": "BINLOG",
    "group_commit_waits": "GROUP_COMMIT",
    "fsync_waits": "FSYNC",
}


METRICS = (
    *STATS_METRICS,
    Metric(
        "tp_group_stalled_query_ratio",
        "stalled / executed statements of the group this poll",
        unit="ratio",
        labels=("group",),
    ),
    Metric(
        "tp_stalled_query_ratio", "stalled / executed statements of the whole pool this poll", unit="ratio"
    ),
    WAITS_PER_S,
    Metric(
        "tp_admin_group_queries_per_s", "statements the Admin thread group executed per second", unit="per_s"
    ),
)


@dataclass
class MysqlGroupCounters(GroupCounters):
    @property
    def dequeues(self) -> int:
        return self.raw["queries_executed"]


@dataclass
class MysqlStatsSection:
    groups: dict[int, MysqlGroupCounters] = field(default_factory=dict)
    waits: list[WaitReason] = field(default_factory=list)
    stalled_query_ratio: float | None = None
    admin: AdminGroup | None = None


class MysqlTpGroupStats(MysqlTpCollector[MysqlStatsSection]):
    name = "mysql_tp_group_stats"
    help = "MySQL Enterprise per-group statements executed/stalled, threads started, waits, as rates."
    table = "tp_thread_group_stats"
    metrics = METRICS

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[MysqlStatsSection]:
        section = MysqlStatsSection()
        samples = []
        wait_totals: dict[str, int] = {}
        total_executed = total_stalled = 0.0
        rates_known = True
        for row in rows:
            group_id = group_id_of(row)
            if is_admin_group(ctx.server, group_id):
                section.admin = self._admin(group_id, row, ctx)
                continue
            raw = {name: int(row[name]) for name in COUNTERS if row.get(name) is not None}
            rates: dict[str, float | None] = {
                name: ctx.counters.rate(("tp_mysql", group_id, name), ctx.now, value)
                for name, value in raw.items()
            }
            executed, stalled = rates.get("queries_executed"), rates.get("stalled_queries_executed")
            ratio = None
            if executed is not None and stalled is not None:
                total_executed += executed
                total_stalled += stalled
                ratio = stalled / executed if executed > 0 else None
            else:
                rates_known = False
            # MySQL marks any statement running past the stall limit "stalled" by design (that is
            # how a group gets to start another one), so the count rising is routine, not a stuck
            # group: the verdict relies on the poller's no-dequeue check instead (stalls held at 0).
            raw["stalls"] = 0
            raw.setdefault("queries_executed", 0)
            mapped: dict[str, float | None] = {
                "stalls": stalled,
                "thread_creations": rates.get("threads_started"),
                "thread_creations_due_to_stall": None,
                "dequeues": executed,
                "throttles": None,
                "wakes": rates.get("wake_thread_stall_checker"),
                **rates,
            }
            section.groups[group_id] = MysqlGroupCounters(
                group_id=group_id, raw=raw, rates=mapped, stalled_query_ratio=ratio
            )
            label = str(group_id)
            samples += [
                sample("tp_group_stalls_per_s", stalled, group=label),
                sample("tp_group_dequeues_per_s", executed, group=label),
                sample("tp_group_thread_creations_per_s", rates.get("threads_started"), group=label),
                sample("tp_group_stalled_query_ratio", ratio, group=label),
            ]
            for column, reason in WAIT_COLUMNS.items():
                if row.get(column) is not None:
                    wait_totals[reason] = wait_totals.get(reason, 0) + int(row[column])
        if rates_known and total_executed > 0:
            section.stalled_query_ratio = total_stalled / total_executed
        samples.append(sample("tp_stalled_query_ratio", section.stalled_query_ratio))
        for reason, count in wait_totals.items():
            per_s = ctx.counters.rate(("tp_mysql_waits", reason), ctx.now, count)
            section.waits.append(WaitReason(reason=reason, count=count, per_s=per_s))
            samples.append(sample("tp_waits_per_s", per_s, reason=reason))
        if section.admin is not None:
            samples.append(sample("tp_admin_group_queries_per_s", section.admin.queries_per_s))
        return CollectorOutput(section=section, samples=samples)

    def put(self, outputs: PollOutputs, section: MysqlStatsSection) -> None:
        outputs.mysql_tp_group_stats = section

    def _admin(self, group_id: int, row: Row, ctx: ParseContext) -> AdminGroup:
        def rate(column: str) -> float | None:
            value = row.get(column)
            return (
                None if value is None else ctx.counters.rate(("tp_mysql_admin", column), ctx.now, int(value))
            )

        return AdminGroup(
            group_id=group_id,
            queries_per_s=rate("queries_executed"),
            connections_per_s=rate("connections_started"),
        )
