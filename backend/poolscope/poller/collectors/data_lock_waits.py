"""performance_schema.data_lock_waits (MySQL / Percona 8.0+): which transaction blocks which on a row lock.

MySQL 8.0's home of what INNODB_LOCK_WAITS was (innodb_lock_waits.py); read only under pressure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import (
    PERFORMANCE_SCHEMA_SELECT,
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    mysql_8_or_later,
    needs_performance_schema,
    needs_pool,
)
from poolscope.poller.collectors.innodb_lock_waits import MAX_ROWS, LockWaits, lock_pairs
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs


class DataLockWaits(Collector[LockWaits]):
    name = "data_lock_waits"
    help = "Row lock waits on MySQL 8.0+: which transaction blocks which (read while a group has a queue or is stalled)."
    privilege = PERFORMANCE_SCHEMA_SELECT
    on_pressure = True

    def applies(self, server: ServerInfo) -> str | None:
        if not mysql_8_or_later(server):
            return (
                f"MySQL 8.0+ only; {server.flavor} {server.version} has information_schema.INNODB_LOCK_WAITS"
            )
        return needs_pool(server) or needs_performance_schema(server)

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT REQUESTING_ENGINE_TRANSACTION_ID AS requesting_trx_id,"
            " BLOCKING_ENGINE_TRANSACTION_ID AS blocking_trx_id"
            f" FROM performance_schema.data_lock_waits LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[LockWaits]:
        return CollectorOutput(section=lock_pairs(rows))

    def put(self, outputs: PollOutputs, section: LockWaits) -> None:
        outputs.innodb_lock_waits = section
