"""information_schema.PROCESSLIST by id, on demand: who a queued connection or a transaction is.

A queued request is not activity yet (the connection shows as Sleep until a worker reads it).
While the processlist is read with SHOW FULL PROCESSLIST every session is named by the poll
itself; on a server too large for that, the processlist collector reads active sessions only
and cannot name the waiters. Reading every session every second there would be the poll's
largest cost: one row per connection decoded in Python while the server's own threads want the
same CPUs. Instead the poller remembers who each session it has seen is, and asks for the rest
by id, in a second round trip, only on polls where the queue or INNODB_TRX names someone it
does not know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.analysis.session_identity import SessionIdentity
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# Unfiltered, it is what backend/dev/poolscope_dev/capture.py stores so that a replay can answer lookups.
EVERY_SESSION_SQL = "SELECT ID, USER, HOST, DB FROM information_schema.PROCESSLIST"
# Bounds the statement: the queue lists at most 200 connections and INNODB_TRX 50 transactions.
MAX_IDS = 500


class SessionLookup(Collector[dict[int, SessionIdentity]]):
    name = "session_lookup"
    help = "User, host and db of queued connections and transactions not seen active (on demand)."
    privilege = "PROCESS"

    def __init__(self) -> None:
        self.ids: list[int] = []

    def for_ids(self, ids: set[int]) -> SessionLookup:
        lookup = SessionLookup()
        lookup.ids = sorted(ids)[:MAX_IDS]
        return lookup

    def sql(self, server: ServerInfo) -> str:
        wanted = ", ".join(str(int(i)) for i in self.ids)
        return f"{EVERY_SESSION_SQL} WHERE ID IN ({wanted})"

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[dict[int, SessionIdentity]]:
        return CollectorOutput(
            section={int(row["id"]): SessionIdentity(row["user"], row["host"], row["db"]) for row in rows}
        )

    def put(self, outputs: PollOutputs, section: dict[int, SessionIdentity]) -> None:
        outputs.session_lookup = section
