"""information_schema.INNODB_TRX aggregated: how many transactions, how many in lock wait, the oldest age."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, as_float, sample
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

METRICS = (
    Metric("trx_active", "open InnoDB transactions", prometheus="poolscope_trx_active"),
    Metric("trx_lock_waits", "InnoDB transactions in LOCK WAIT", prometheus="poolscope_trx_lock_waits"),
    Metric("trx_longest_age_s", "age of the oldest open InnoDB transaction", unit="s"),
)


@dataclass
class TrxSummary:
    count: int
    lock_waits: int
    longest_age_s: float | None


class InnodbTrxSummary(Collector[TrxSummary]):
    name = "innodb_trx_summary"
    help = "Count of open InnoDB transactions, of those in LOCK WAIT, and the longest age (needs PROCESS)."
    privilege = "PROCESS"
    metrics = METRICS

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT COUNT(*) AS total, COALESCE(SUM(trx_state = 'LOCK WAIT'), 0) AS lock_waits,"
            " TIMESTAMPDIFF(MICROSECOND, MIN(trx_started), NOW(6)) / 1e6 AS longest_s"
            " FROM information_schema.INNODB_TRX"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[TrxSummary]:
        return _parse(rows)

    def put(self, outputs: PollOutputs, section: TrxSummary) -> None:
        outputs.innodb_trx_summary = section


def _parse(rows: list[Row]) -> CollectorOutput[TrxSummary]:
    row: Row = rows[0] if rows else {}
    summary = TrxSummary(
        count=int(row.get("total") or 0),
        lock_waits=int(row.get("lock_waits") or 0),
        longest_age_s=as_float(row.get("longest_s")),
    )
    return CollectorOutput(
        section=summary,
        samples=[
            sample("trx_active", float(summary.count)),
            sample("trx_lock_waits", float(summary.lock_waits)),
            sample("trx_longest_age_s", summary.longest_age_s or 0.0),
        ],
    )
