"""performance_schema.tp_thread_state (MySQL Enterprise): one row per pool thread, summarised per group.

Used for what the group rows do not say: how many of a group's threads the pool has marked
stalled (MARKED_STALLED, in newer 8.0 releases) and what the threads are waiting on (WAIT_TYPE).
SELECT * for the same reason as tp_thread_group_state: the column set grew across releases.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poolscope.poller.collectors.base import (
    CollectorOutput,
    ParseContext,
    Row,
    sample,
)
from poolscope.poller.collectors.mysql_tp_group_state import MysqlTpCollector, group_id_of

MAX_ROWS = 20_000


@dataclass
class GroupThreads:
    threads: int = 0
    # None when the server has no MARKED_STALLED column.
    marked_stalled: int | None = None
    wait_types: dict[str, int] = field(default_factory=dict)


class MysqlTpThreadState(MysqlTpCollector):
    name = "mysql_tp_thread_state"
    help = "MySQL Enterprise pool threads per group: how many are marked stalled and what they wait on."
    table = "tp_thread_state"
    limit = MAX_ROWS

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        groups: dict[int, GroupThreads] = {}
        by_wait: dict[str, int] = {}
        for row in rows:
            group = groups.setdefault(group_id_of(row), GroupThreads())
            group.threads += 1
            if "marked_stalled" in row and row["marked_stalled"] is not None:
                group.marked_stalled = (group.marked_stalled or 0) + (1 if int(row["marked_stalled"]) else 0)
            wait = row.get("wait_type")
            if wait:
                group.wait_types[str(wait)] = group.wait_types.get(str(wait), 0) + 1
                by_wait[str(wait)] = by_wait.get(str(wait), 0) + 1
        samples = [sample("tp_threads_waiting", float(n), wait_type=w) for w, n in sorted(by_wait.items())]
        return CollectorOutput(section=groups, samples=samples)
