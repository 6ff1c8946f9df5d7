"""information_schema.INNODB_LOCK_WAITS (MariaDB, MySQL 5.7): which transaction blocks which on a row lock.

Read only under pressure (on_pressure): the pairs name the transaction holding the row lock a holder
waits for; analysis/holders.py joins them to INNODB_TRX and the processlist. MySQL 8.0 moved this
table to performance_schema (data_lock_waits.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    mysql_8_or_later,
    needs_pool,
)
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# (requesting trx id, blocking trx id), as InnoDB spells them.
LockWaits = list[tuple[str, str]]
MAX_ROWS = 1_000


def lock_pairs(rows: list[Row]) -> LockWaits:
    return [(str(r["requesting_trx_id"]), str(r["blocking_trx_id"])) for r in rows]


class InnodbLockWaits(Collector[LockWaits]):
    name = "innodb_lock_waits"
    help = "Row lock waits: which transaction blocks which (read while a group has a queue or is stalled)."
    privilege = "PROCESS"
    on_pressure = True

    def applies(self, server: ServerInfo) -> str | None:
        if mysql_8_or_later(server):
            return "MySQL 8.0 moved it to performance_schema.data_lock_waits (data_lock_waits)"
        return needs_pool(server)

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT requesting_trx_id, blocking_trx_id FROM information_schema.INNODB_LOCK_WAITS"
            f" LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[LockWaits]:
        return CollectorOutput(section=lock_pairs(rows))

    def put(self, outputs: PollOutputs, section: LockWaits) -> None:
        outputs.innodb_lock_waits = section
