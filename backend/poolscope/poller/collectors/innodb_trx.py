"""information_schema.INNODB_TRX: the oldest open transactions, listed (needs PROCESS).

Listed are the transactions open for at least MIN_LISTED_AGE_S or waiting for a lock: the ones
an incident is about. A busy OLTP server has dozens of millisecond-long transactions open at any
instant; listing them would cost a row each per second and hide the long ones. Their count and
the oldest age come from innodb_trx_summary, over every transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    as_float,
)
from poolscope.schemas import ServerInfo, Transaction
from poolscope.values import int_or_none

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

MAX_LISTED = 50
MIN_LISTED_AGE_S = 1.0


class InnodbTrx(Collector[list[Transaction]]):
    name = "innodb_trx"
    help = "InnoDB transactions open for 1 s or more, or waiting for a lock: state, lock wait, SQL."
    privilege = "PROCESS"

    def sql(self, server: ServerInfo) -> str:
        # Ages come from the server's own clock so a skewed monitoring host cannot distort them.
        return (
            "SELECT trx_id, trx_state, UNIX_TIMESTAMP(trx_started) AS started_at,"
            " TIMESTAMPDIFF(MICROSECOND, trx_started, NOW(6)) / 1e6 AS age_s,"
            " TIMESTAMPDIFF(MICROSECOND, trx_wait_started, NOW(6)) / 1e6 AS wait_s,"
            " trx_mysql_thread_id, trx_rows_locked, trx_rows_modified, trx_query"
            # Only the oldest are listed; exact totals come from innodb_trx_summary, so a server
            # with thousands of open transactions costs the poller 50 rows, not thousands.
            " FROM information_schema.INNODB_TRX"
            f" WHERE trx_started <= NOW(6) - INTERVAL {MIN_LISTED_AGE_S:g} SECOND OR trx_state = 'LOCK WAIT'"
            f" ORDER BY trx_started LIMIT {MAX_LISTED}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[Transaction]]:
        items = [
            Transaction(
                trx_id=str(row["trx_id"]),
                state=str(row["trx_state"]),
                started_at=as_float(row["started_at"]),
                age_s=as_float(row["age_s"]),
                wait_s=as_float(row["wait_s"]),
                thread_id=int_or_none(row["trx_mysql_thread_id"]),
                query=row["trx_query"],
                rows_locked=int_or_none(row["trx_rows_locked"]),
                rows_modified=int_or_none(row["trx_rows_modified"]),
            )
            for row in rows
        ]
        items.sort(key=lambda t: -(t.age_s or 0.0))
        return CollectorOutput(section=items)

    def put(self, outputs: PollOutputs, section: list[Transaction]) -> None:
        outputs.innodb_trx = section
