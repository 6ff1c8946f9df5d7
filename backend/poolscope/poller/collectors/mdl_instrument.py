"""performance_schema.setup_instruments: is the metadata lock instrument on?

Without it performance_schema.metadata_locks lists nothing, and a holder waiting for a metadata
lock cannot be told who holds it: the UI then says how to turn it on. Read under pressure, at most
every 30 s (it changes only by an UPDATE of setup_instruments or a restart).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.analysis.holders import MDL_INSTRUMENT
from poolscope.poller.collectors.base import (
    PERFORMANCE_SCHEMA_SELECT,
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
)
from poolscope.poller.collectors.metadata_locks import MetadataLocks
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs


class MdlInstrument(Collector[bool]):
    name = "mdl_instrument"
    help = "Whether performance_schema's metadata lock instrument is on (read while a group has a queue or is stalled)."
    privilege = PERFORMANCE_SCHEMA_SELECT
    on_pressure = True
    every_s = 30.0

    def applies(self, server: ServerInfo) -> str | None:
        return MetadataLocks().applies(server)

    def sql(self, server: ServerInfo) -> str:
        return (
            f"SELECT NAME, ENABLED FROM performance_schema.setup_instruments WHERE NAME = '{MDL_INSTRUMENT}'"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[bool]:
        return CollectorOutput(section=any(str(r["enabled"]).upper() == "YES" for r in rows))

    def put(self, outputs: PollOutputs, section: bool) -> None:
        outputs.mdl_instrument = section
