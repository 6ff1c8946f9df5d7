"""The processlist: active sessions with their command, time and SQL, and who every session is.

It is the only source of a queued connection's SQL: a queued request has not been read from its
socket yet (the connection shows as Sleep), so the poller remembers the last statement it saw
each connection run.

Two forms, the next poll's chosen by what this one read:
- `SHOW FULL PROCESSLIST` while the server has at most SHOW_MAX_CONNECTIONS. It builds no
  temporary table: under a 100-thread load it cost the server 0.17 ms per poll (p50) against
  3.2 ms for information_schema.PROCESSLIST, whose TEXT column makes every read create and drop
  an on-disk Aria table (docs/decisions/0002-processlist-by-server-size.md). Every session comes back, so every queued
  connection is named in the same round trip, and its rows are the connection count. Time is
  in whole seconds there, and statements come whole (up to max_allowed_packet).
- information_schema.PROCESSLIST, active sessions only, statements cut to MAX_SQL_CHARS on the
  server: while the connection count is unknown (the first polls after a connect), above
  SHOW_MAX_CONNECTIONS (decoding every idle session's row each second would cost the poller
  more than the temporary table costs the server), and for SHOW_BACKOFF_S after SHOW returned
  a statement over SHOW_MAX_STATEMENT_CHARS (a bulk INSERT can be megabytes, every second).
  Idle sessions are then named from memory, or looked up by id (session_lookup).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poolscope.analysis.session_identity import SessionIdentity
from poolscope.metrics import Metric
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, sample
from poolscope.schemas import ServerInfo, Session

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# Above this many connections the rows of SHOW FULL PROCESSLIST (~10 µs of the poller's CPU
# each) cost more than information_schema's temporary table; the first poll, with the count
# still unknown, takes the form that is safe at any size.
SHOW_MAX_CONNECTIONS = 300
SHOW_MAX_STATEMENT_CHARS = 64 * 1024
SHOW_BACKOFF_S = 60.0
SHOW_SQL = "SHOW FULL PROCESSLIST"
# Active sessions read per poll, longest-running first: a pile-up of thousands of running
# statements costs the poller a bounded read.
MAX_ROWS = 2_000
MAX_ACTIVE_LISTED = 500
MAX_SQL_CHARS = 2048
IDLE_COMMANDS = ("Sleep", "Daemon", "Binlog Dump", "Binlog Dump GTID")

METRICS = (Metric("sessions_active", "sessions running a statement (Query or Execute), ours aside"),)


@dataclass
class ProcesslistSection:
    # Active sessions only: a queued connection takes its command, time and SQL from here.
    by_id: dict[int, Session] = field(default_factory=dict)
    active: list[Session] = field(default_factory=list)
    # Who every session this read saw is, idle ones included (all of them in the SHOW form).
    identities: Mapping[int, SessionIdentity] = field(default_factory=dict)
    # The read listed every session the server has (the SHOW form), not only the active ones.
    complete: bool = False


class Processlist(Collector[ProcesslistSection]):
    name = "processlist"
    help = "Active sessions: the command, time and SQL of each, and who runs it."
    privilege = "PROCESS"
    metrics = METRICS

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.use_show = False
        self.information_schema_until = 0.0

    def information_schema_sql(self, server: ServerInfo) -> str:
        time_ms = "TIME_MS" if server.flavor == "mariadb" else "TIME * 1000"
        idle = ", ".join(f"'{c}'" for c in IDLE_COMMANDS)
        return (
            f"SELECT ID, USER, HOST, DB, COMMAND, {time_ms} AS TIME_MS, STATE, LEFT(INFO, {MAX_SQL_CHARS}) AS INFO"
            f" FROM information_schema.PROCESSLIST WHERE COMMAND NOT IN ({idle})"
            f" ORDER BY TIME_MS DESC LIMIT {MAX_ROWS}"
        )

    def sql(self, server: ServerInfo) -> str:
        return SHOW_SQL if self.use_show else self.information_schema_sql(server)

    def statements(self, server: ServerInfo) -> list[str]:
        return [self.information_schema_sql(server), SHOW_SQL]

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[ProcesslistSection]:
        # SHOW lists idle sessions too (only who they are is kept of those), and captured output
        # replayed as is may.
        identities = {int(row["id"]): SessionIdentity(row["user"], row["host"], row["db"]) for row in rows}
        huge = any(_is_huge(row["info"]) for row in rows)
        sessions = [_session(row) for row in rows if str(row["command"]) not in IDLE_COMMANDS]
        return self._output(sessions, identities, len(rows), huge, ctx)

    def _output(
        self,
        sessions: list[Session],
        identities: Mapping[int, SessionIdentity],
        listed: int,
        huge: bool,
        ctx: ParseContext,
    ) -> CollectorOutput[ProcesslistSection]:
        # Our own polling session is not activity worth showing.
        active = [s for s in sessions if not _is_own_poll(s)]
        active.sort(key=lambda s: -(s.time_s or 0.0))
        running = sum(1 for s in active if s.command in ("Query", "Execute"))
        section = ProcesslistSection(
            by_id={s.id: s for s in active},
            active=active[:MAX_ACTIVE_LISTED],
            identities=identities,
            complete=self.use_show,  # this read was SHOW's (sql() chose by it)
        )
        self.use_show = self._next_read_is_show(listed, huge, ctx)
        return CollectorOutput(section=section, samples=[sample("sessions_active", float(running))])

    def put(self, outputs: PollOutputs, section: ProcesslistSection) -> None:
        outputs.processlist = section

    def _next_read_is_show(self, listed: int, huge: bool, ctx: ParseContext) -> bool:
        connections = ctx.connections  # as the previous poll's status read it
        if self.use_show:
            connections = listed  # SHOW lists every session: the count as of this read
            if huge:
                self.information_schema_until = ctx.now + SHOW_BACKOFF_S
        return (
            connections is not None
            and connections <= SHOW_MAX_CONNECTIONS
            and ctx.now >= self.information_schema_until
        )


def _session(row: Row) -> Session:
    if "time_ms" in row:
        time_s = None if row["time_ms"] is None else float(row["time_ms"]) / 1000.0
    else:
        time_s = None if row.get("time") is None else float(row["time"])
    info = row["info"]
    if isinstance(info, str) and len(info) > MAX_SQL_CHARS:
        info = info[:MAX_SQL_CHARS]  # SHOW FULL sends the whole statement
    return Session(
        id=int(row["id"]),
        user=row["user"],
        host=row["host"],
        db=row["db"],
        command=str(row["command"]),
        time_s=time_s,
        state=row["state"],
        info=info,
    )


def _is_huge(info: object) -> bool:
    return isinstance(info, str) and len(info) > SHOW_MAX_STATEMENT_CHARS


def _is_own_poll(session: Session) -> bool:
    info = session.info or ""
    return "information_schema.PROCESSLIST" in info or info.strip().upper() == SHOW_SQL
