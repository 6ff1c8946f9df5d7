"""performance_schema.threads by THREAD_ID, on demand: the connection behind a Performance Schema
thread id (metadata lock owners, the threads of statement digests, MySQL Enterprise pool threads).

Asked in the poll's second round trip, with the session lookup, and only for the ids a pressure
poll's rows named: reading every thread would cost a row per connection each second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import (
    PERFORMANCE_SCHEMA_SELECT,
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
)
from poolscope.schemas import ServerInfo
from poolscope.values import int_or_none

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

MAX_IDS = 2_000


class ThreadLookup(Collector[dict[int, int]]):
    name = "thread_lookup"
    help = "Connection ids of the performance_schema threads a pressure poll named (on demand)."
    privilege = PERFORMANCE_SCHEMA_SELECT

    def __init__(self) -> None:
        self.ids: list[int] = []

    def for_ids(self, ids: set[int]) -> ThreadLookup:
        lookup = ThreadLookup()
        lookup.ids = sorted(ids)[:MAX_IDS]
        return lookup

    def sql(self, server: ServerInfo) -> str:
        wanted = ", ".join(str(int(i)) for i in self.ids)
        return (
            f"SELECT THREAD_ID, PROCESSLIST_ID FROM performance_schema.threads WHERE THREAD_ID IN ({wanted})"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[dict[int, int]]:
        found = {}
        for row in rows:
            thread_id, connection_id = int_or_none(row["thread_id"]), int_or_none(row["processlist_id"])
            if thread_id is not None and connection_id:
                found[thread_id] = connection_id
        return CollectorOutput(section=found)

    def put(self, outputs: PollOutputs, section: dict[int, int]) -> None:
        outputs.thread_lookup = section
