"""information_schema.THREAD_POOL_WAITS: why pool threads blocked (12 fixed reasons), as rates."""

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
from poolscope.schemas import ServerInfo, WaitReason

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# MySQL Enterprise's *_WAITS columns feed the same series (mysql_tp_group_stats).
WAITS_PER_S = Metric(
    "tp_waits_per_s", "pool thread waits by reason, per second", unit="per_s", labels=("reason",)
)
METRICS = (WAITS_PER_S,)


class ThreadPoolWaits(Collector[list[WaitReason]]):
    name = "thread_pool_waits"
    help = "Counts of thread waits by reason (row lock, disk I/O, net, ...), as per-second rates."
    # Cumulative counts of rare events: a 5 s rate loses nothing a DBA reads.
    every_s = 5.0
    metrics = METRICS

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_table(server, "THREAD_POOL_WAITS")

    def sql(self, server: ServerInfo) -> str:
        return "SELECT REASON, `COUNT` FROM information_schema.THREAD_POOL_WAITS"

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[WaitReason]]:
        waits: list[WaitReason] = []
        samples = []
        for row in rows:
            reason = str(row["reason"])
            count = int(row["count"])
            per_s = ctx.counters.rate(("tp_waits", reason), ctx.now, count)
            waits.append(WaitReason(reason=reason, count=count, per_s=per_s))
            samples.append(sample("tp_waits_per_s", per_s, reason=reason))
        return CollectorOutput(section=waits, samples=samples)

    def put(self, outputs: PollOutputs, section: list[WaitReason]) -> None:
        outputs.thread_pool_waits = section
