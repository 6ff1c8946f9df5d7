"""information_schema.INNODB_TRX: open transactions, the oldest, and lock waits (needs PROCESS)."""

from __future__ import annotations

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    as_float,
    as_int,
    sample,
)
from poolscope.schemas import ServerInfo, Transaction, Transactions

MAX_ROWS = 10_000
MAX_LISTED = 50


class InnodbTrx(Collector):
    name = "innodb_trx"
    help = "Active InnoDB transactions: count, longest age, lock waits, with the owner's SQL."
    privilege = "PROCESS"

    def sql(self, server: ServerInfo) -> str:
        # Ages come from the server's own clock so a skewed monitoring host cannot distort them.
        return (
            "SELECT trx_id, trx_state, UNIX_TIMESTAMP(trx_started) AS started_at,"
            " TIMESTAMPDIFF(MICROSECOND, trx_started, NOW(6)) / 1e6 AS age_s,"
            " TIMESTAMPDIFF(MICROSECOND, trx_wait_started, NOW(6)) / 1e6 AS wait_s,"
            " trx_mysql_thread_id, trx_rows_locked, trx_rows_modified, trx_query"
            f" FROM information_schema.INNODB_TRX LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        items = [
            Transaction(
                trx_id=str(row["trx_id"]),
                state=str(row["trx_state"]),
                started_at=as_float(row["started_at"]),
                age_s=as_float(row["age_s"]),
                wait_s=as_float(row["wait_s"]),
                thread_id=as_int(row["trx_mysql_thread_id"]),
                query=row["trx_query"],
                rows_locked=as_int(row["trx_rows_locked"]),
                rows_modified=as_int(row["trx_rows_modified"]),
            )
            for row in rows
        ]
        items.sort(key=lambda t: -(t.age_s or 0.0))
        ages = [t.age_s for t in items if t.age_s is not None]
        section = Transactions(
            count=len(items),
            lock_waits=sum(1 for t in items if t.state == "LOCK WAIT"),
            longest_age_s=max(ages) if ages else None,
            items=items[:MAX_LISTED],
        )
        samples = [
            sample("trx_active", float(section.count)),
            sample("trx_lock_waits", float(section.lock_waits)),
            sample("trx_longest_age_s", section.longest_age_s or 0.0),
        ]
        return CollectorOutput(section=section, samples=samples)
