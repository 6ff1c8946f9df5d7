"""performance_schema.events_statements_current: the server's own digest of each running statement.

Where the server computes digests (MySQL by default; MariaDB with performance_schema=ON), a holder's
statement is grouped by the server's DIGEST; elsewhere analysis/digest.py normalises the text. Rows
are keyed by Performance Schema thread id: the poller looks up their connection ids (thread_lookup).
Read only under pressure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.poller.collectors.base import (
    PERFORMANCE_SCHEMA_SELECT,
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    needs_performance_schema,
    needs_pool,
)
from poolscope.schemas import ServerInfo
from poolscope.values import int_or_none

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# performance_schema thread id -> (DIGEST, DIGEST_TEXT)
ServerDigests = dict[int, tuple[str, str | None]]
MAX_ROWS = 2_000
MAX_TEXT_CHARS = 1024


class StatementDigests(Collector[ServerDigests]):
    name = "statement_digests"
    help = "The server's digest of each running statement (performance_schema; read while a group has a queue or is stalled)."
    privilege = PERFORMANCE_SCHEMA_SELECT
    on_pressure = True

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool(server) or needs_performance_schema(server)

    def sql(self, server: ServerInfo) -> str:
        return (
            f"SELECT THREAD_ID, DIGEST, LEFT(DIGEST_TEXT, {MAX_TEXT_CHARS}) AS DIGEST_TEXT"
            " FROM performance_schema.events_statements_current"
            f" WHERE DIGEST IS NOT NULL AND END_EVENT_ID IS NULL LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[ServerDigests]:
        digests: ServerDigests = {}
        for row in rows:
            thread_id = int_or_none(row["thread_id"])
            if thread_id is not None and row["digest"]:
                digests[thread_id] = (str(row["digest"]), row["digest_text"])
        return CollectorOutput(section=digests)

    def put(self, outputs: PollOutputs, section: ServerDigests) -> None:
        outputs.statement_digests = section
