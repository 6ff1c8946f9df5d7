"""information_schema.INNODB_TRX by trx_id, on demand: the transactions that block a holder's row
lock and are not among the listed ones (innodb_trx lists those open ≥ 1 s or waiting).

Asked in the poll's second round trip, only for blocking transaction ids this poll's lock waits
named and the listing did not hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row
from poolscope.poller.collectors.innodb_trx import InnodbTrx
from poolscope.schemas import ServerInfo, Transaction

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

MAX_IDS = 200


class TrxLookup(Collector[list[Transaction]]):
    name = "trx_lookup"
    help = "InnoDB transactions that block a holder and were not listed (on demand)."
    privilege = "PROCESS"

    def __init__(self) -> None:
        self.ids: list[str] = []

    def for_ids(self, ids: set[str]) -> TrxLookup:
        lookup = TrxLookup()
        # Transaction ids are numbers; anything else is not sent to the server.
        lookup.ids = sorted(i for i in ids if i.isdigit())[:MAX_IDS]
        return lookup

    def sql(self, server: ServerInfo) -> str:
        wanted = ", ".join(f"'{i}'" for i in self.ids) or "''"
        listing = InnodbTrx().sql(server)
        columns = listing[: listing.index(" FROM ")]
        return f"{columns} FROM information_schema.INNODB_TRX WHERE trx_id IN ({wanted})"

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[Transaction]]:
        return CollectorOutput(section=InnodbTrx().parse(rows, ctx).section)

    def put(self, outputs: PollOutputs, section: list[Transaction]) -> None:
        outputs.trx_lookup = section
