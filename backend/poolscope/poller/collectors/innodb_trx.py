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

MAX_LISTED = 50
MAX_SQL_CHARS = 2048


class InnodbTrx(Collector):
    name = "innodb_trx"
    help = "Active InnoDB transactions: count, longest age, lock waits, with the owner's SQL."
    privilege = "PROCESS"

    def sql(self, server: ServerInfo) -> str:
        # Ages come from the server's own clock so a skewed monitoring host cannot distort them.
        return (
            "SELECT t.trx_id, t.trx_state, UNIX_TIMESTAMP(t.trx_started) AS started_at,"
            " TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1e6 AS age_s,"
            " TIMESTAMPDIFF(MICROSECOND, t.trx_wait_started, NOW(6)) / 1e6 AS wait_s,"
            " t.trx_mysql_thread_id, t.trx_rows_locked, t.trx_rows_modified,"
            f" LEFT(t.trx_query, {MAX_SQL_CHARS}) AS trx_query, p.USER, p.HOST, p.DB,"
            " COUNT(*) OVER () AS total, SUM(t.trx_state = 'LOCK WAIT') OVER () AS lock_waits,"
            " MAX(TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6))) OVER () / 1e6 AS longest_s"
            " FROM information_schema.INNODB_TRX t"
            " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id"
            f" ORDER BY t.trx_started LIMIT {MAX_LISTED}"
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
                user=row["user"],
                host=row["host"],
                db=row["db"],
                query=row["trx_query"],
                rows_locked=as_int(row["trx_rows_locked"]),
                rows_modified=as_int(row["trx_rows_modified"]),
            )
            for row in rows
        ]
        first = rows[0] if rows else None
        section = Transactions(
            count=int(first["total"]) if first else 0,
            lock_waits=int(first["lock_waits"] or 0) if first else 0,
            longest_age_s=as_float(first["longest_s"]) if first else None,
            items=items,
        )
        samples = [
            sample("trx_active", float(section.count)),
            sample("trx_lock_waits", float(section.lock_waits)),
            sample("trx_longest_age_s", section.longest_age_s or 0.0),
        ]
        return CollectorOutput(section=section, samples=samples)
