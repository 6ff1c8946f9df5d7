"""information_schema.PROCESSLIST, active sessions only: what is running now (others' rows need PROCESS).

Also the only place the SQL of a queued connection can come from: a queued request has not been
read from its socket yet (PROCESSLIST shows it as Sleep with no INFO), so the poller remembers
the last statement it saw each connection run.
"""

from __future__ import annotations

from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, as_float, sample
from poolscope.schemas import ServerInfo, Session

MAX_LISTED = 500
MAX_SQL_CHARS = 2048


class Processlist(Collector):
    name = "processlist"
    help = "Active (non-Sleep) sessions with their command, time and SQL."
    privilege = "PROCESS"

    def sql(self, server: ServerInfo) -> str:
        time_ms = "TIME_MS" if server.flavor == "mariadb" else "TIME * 1000"
        return (
            f"SELECT ID, USER, HOST, DB, COMMAND, {time_ms} AS TIME_MS, STATE, LEFT(INFO, {MAX_SQL_CHARS}) AS INFO"
            " FROM information_schema.PROCESSLIST"
            " WHERE COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID')"
            " AND ID <> CONNECTION_ID()"
            f" ORDER BY TIME_MS DESC LIMIT {MAX_LISTED}"
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
        running = sum(1 for s in sessions if s.command in ("Query", "Execute"))
        return CollectorOutput(
            section=sessions,
            samples=[
                sample("sessions_active", float(running)),
                sample("sessions_listed", as_float(len(rows))),
            ],
        )
