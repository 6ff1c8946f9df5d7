"""performance_schema.tp_thread_group_state (MySQL Enterprise thread_pool plugin) as GroupState rows.

Mapped onto the same per-group model as MariaDB's THREAD_POOL_GROUPS, so the group table, the
heatmap and stall verdicts work unchanged:
  connections     = CONNECTION_COUNT
  threads         = THREAD_COUNT
  active_threads  = ACTIVE_THREAD_COUNT
  standby_threads = CONSUMER_THREADS + RESERVE_THREADS (threads ready to take work)
  queue_length    = QUEUED_QUERIES (high-priority queue) + QUEUED_TRANSACTIONS (low-priority)
  has_listener    = WAITING_THREAD_NUMBER is set (a thread polls the group's connections)
  is_stalled      = False: STALLED_THREAD_COUNT counts statements past the stall limit, which
                    MySQL lets happen routinely (stalled_threads shows it); not a stuck group
  oldest_queued_ms = OLDEST_QUEUED (milliseconds)
SELECT * because the column set grew across releases (8.4 added EFFECTIVE_MAX_TRANSACTIONS_LIMIT,
NUM_QUERY_THREADS and five more, MySQL 8.4 manual §29.12.16.2): columns this code does not know
are ignored and missing ones read as unknown, so a newer server degrades instead of failing.

From 8.0.31 the pool has an Admin thread group for TP_CONNECTION_ADMIN connections, reported after
the pool's own groups (manual §7.6.3.3, "Privileged Connections"). It is not one of the
thread_pool_size groups: its row is left out of the group model (is_admin_group) and reported on
its own, so it never shows as a phantom "group N".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import (
    PERFORMANCE_SCHEMA_SELECT,
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    SectionT,
    needs_pool_kind,
    sample,
)
from poolscope.poller.collectors.thread_pool_groups import GAUGES
from poolscope.poller.collectors.thread_pool_groups import METRICS as GROUP_METRICS
from poolscope.poller.collectors.thread_pool_queue_summary import QUEUE_WAIT_MAX, QUEUED_CONNECTIONS
from poolscope.schemas import GroupState, ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

ADMIN_GROUP_SINCE = (8, 0, 31)

METRICS = (
    *GROUP_METRICS,
    Metric(
        "tp_group_stalled_threads",
        "tp_thread_group_state.STALLED_THREAD_COUNT (statements past the stall limit)",
        labels=("group",),
    ),
    QUEUED_CONNECTIONS,
    QUEUE_WAIT_MAX,
)


def group_id_of(row: Row) -> int:
    # 8.0's performance_schema tables call it TP_GROUP_ID; 5.7's information_schema THREAD_GROUP_ID.
    value = row.get("tp_group_id", row.get("thread_group_id"))
    return int(value)  # type: ignore[arg-type]


def is_admin_group(server: ServerInfo, group_id: int) -> bool:
    """The Admin thread group's row: numbered after the thread_pool_size groups (startup-only here)."""
    return (
        server.version_tuple >= ADMIN_GROUP_SINCE
        and server.startup_pool_size is not None
        and group_id >= server.startup_pool_size
    )


def _int(row: Row, *names: str) -> int:
    total = 0
    for name in names:
        value = row.get(name)
        if value is not None:
            total += int(value)
    return total


class MysqlTpCollector(Collector[SectionT]):
    """One performance_schema.tp_* table of the MySQL Enterprise thread_pool plugin, read whole."""

    table: ClassVar[str]
    # performance_schema tables are not readable with PROCESS alone.
    privilege = PERFORMANCE_SCHEMA_SELECT
    limit: ClassVar[int | None] = None

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_kind(server, "mysql_enterprise", self.table)

    @property
    def readable_table(self) -> str | None:
        return self.table

    def sql(self, server: ServerInfo) -> str:
        # SELECT *: the column set grew across releases (see the module docstring).
        limit = f" LIMIT {self.limit}" if self.limit else ""
        return f"SELECT * FROM performance_schema.{self.table}{limit}"


class MysqlTpGroupState(MysqlTpCollector[list[GroupState]]):
    name = "mysql_tp_group_state"
    help = "MySQL Enterprise per-group threads, queued statements and transactions, oldest wait."
    table = "tp_thread_group_state"
    metrics = METRICS

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[GroupState]]:
        groups: list[GroupState] = []
        samples = []
        for row in sorted(rows, key=group_id_of):
            if is_admin_group(ctx.server, group_id_of(row)):
                continue
            waiting = row.get("waiting_thread_number")
            oldest = row.get("oldest_queued")
            group = GroupState(
                group_id=group_id_of(row),
                connections=_int(row, "connection_count"),
                threads=_int(row, "thread_count"),
                active_threads=_int(row, "active_thread_count"),
                # The manual spells it "CONSUMER THREADS" (8.0 to 9.x); every other column has an
                # underscore, so both spellings are read.
                standby_threads=_int(row, "consumer_threads", "consumer threads", "reserve_threads"),
                queue_length=_int(row, "queued_queries", "queued_transactions"),
                has_listener=waiting is not None and int(waiting) >= 0,
                is_stalled=False,
                stalled_threads=_int(row, "stalled_thread_count"),
                oldest_queued_ms=float(oldest) if oldest is not None and group_has_queue(row) else None,
            )
            groups.append(group)
            label = str(group.group_id)
            for field_name, metric in GAUGES.items():
                samples.append(sample(metric, float(getattr(group, field_name)), group=label))
            samples.append(sample("tp_group_stalled_threads", float(group.stalled_threads or 0), group=label))
        queued = sum(g.queue_length for g in groups)
        waits = [g.oldest_queued_ms for g in groups if g.oldest_queued_ms is not None]
        # The same whole-pool series MariaDB's queue collector feeds, so the queue charts work.
        samples += [
            sample("tp_queued_connections", float(queued)),
            sample("tp_queue_wait_max_ms", max(waits) if waits else 0.0),
        ]
        return CollectorOutput(section=groups, samples=samples)

    def put(self, outputs: PollOutputs, section: list[GroupState]) -> None:
        outputs.mysql_tp_group_state = section


def group_has_queue(row: Row) -> bool:
    return _int(row, "queued_queries", "queued_transactions") > 0
