"""information_schema.PROCESSLIST, active sessions only (others' rows need PROCESS), with their SQL.

It is the only source of a queued connection's SQL: a queued request has not been read from its
socket yet (the connection shows as Sleep), so the poller remembers the last statement it saw
each connection run. Idle sessions are named by session_directory, read less often: on a busy
server they are most of the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, sample
from poolscope.schemas import ServerInfo, Session

# Active sessions read per poll, longest-running first: a pile-up of thousands of running
# statements costs the poller a bounded read.
MAX_ROWS = 2_000
MAX_ACTIVE_LISTED = 500
MAX_SQL_CHARS = 2048
IDLE_COMMANDS = ("Sleep", "Daemon", "Binlog Dump", "Binlog Dump GTID")


@dataclass
class ProcesslistSection:
    by_id: dict[int, Session] = field(default_factory=dict)
    active: list[Session] = field(default_factory=list)


class Processlist(Collector):
    name = "processlist"
    help = "Active sessions: the command, time and SQL of each, and who runs it."
    privilege = "PROCESS"

    def sql(self, server: ServerInfo) -> str:
        time_ms = "TIME_MS" if server.flavor == "mariadb" else "TIME * 1000"
        idle = ", ".join(f"'{c}'" for c in IDLE_COMMANDS)
        return (
            f"SELECT ID, USER, HOST, DB, COMMAND, {time_ms} AS TIME_MS, STATE, LEFT(INFO, {MAX_SQL_CHARS}) AS INFO"
            f" FROM information_schema.PROCESSLIST WHERE COMMAND NOT IN ({idle})"
            f" ORDER BY TIME_MS DESC LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        sessions = [
            Session(
                id=int(row["id"]),
                user=row["user"],
                host=row["host"],
                db=row["db"],
                command=str(row["command"]),
                time_s=None if row["time_ms"] is None else float(row["time_ms"]) / 1000.0,
                state=row["state"],
                info=row["info"],
            )
            for row in rows
        ]
        # The SQL already leaves idle sessions out; captured output replayed as is may not.
        # Our own polling session is not activity worth showing.
        active = [s for s in sessions if s.command not in IDLE_COMMANDS and not _is_own_poll(s)]
        active.sort(key=lambda s: -(s.time_s or 0.0))
        running = sum(1 for s in active if s.command in ("Query", "Execute"))
        section = ProcesslistSection(by_id={s.id: s for s in active}, active=active[:MAX_ACTIVE_LISTED])
        return CollectorOutput(section=section, samples=[sample("sessions_active", float(running))])


def _is_own_poll(session: Session) -> bool:
    return bool(session.info) and "information_schema.PROCESSLIST" in (session.info or "")
