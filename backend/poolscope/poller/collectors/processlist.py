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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poolscope.analysis.session_identity import SessionIdentity
from poolscope.metrics import Metric
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, sample
from poolscope.poller.wire import RawRows
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


class SessionListing(Mapping[int, SessionIdentity]):
    """Who each session of a SHOW FULL PROCESSLIST read is, decoded only for the ids asked about.

    An idle application pool lists hundreds of sleeping sessions every second; the poll names
    only the few that are queued or hold a transaction (analysis/session_identity.py).
    """

    def __init__(self, rows: RawRows) -> None:
        self._rows = rows
        names = rows.names
        self._id_at = names.index("id")
        self._who_at = (names.index("user"), names.index("host"), names.index("db"))
        self._by_id: dict[int, bytes] | None = None

    def _index(self) -> dict[int, bytes]:
        if self._by_id is None:
            rows, at = self._rows, self._id_at
            self._by_id = {int(rows.value(packet, at)): packet for packet in rows.packets}
        return self._by_id

    def __getitem__(self, connection_id: int) -> SessionIdentity:
        packet = self._index()[connection_id]
        user, host, db = (self._rows.value(packet, at) for at in self._who_at)
        return SessionIdentity(user, host, db)

    def __contains__(self, connection_id: object) -> bool:
        return connection_id in self._index()

    def __iter__(self) -> Iterator[int]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())


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
        # Of the last SHOW read: its result shape, its idle commands as sent, its active rows' Sessions,
        # each row's head (_active_packets).
        self._shape_names: tuple[str, ...] | None = None
        self._idle: tuple[bytes, ...] = ()
        self._previous: dict[bytes, Session] = {}
        self._heads = RowHeads()

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

    def reads_raw(self) -> bool:
        # SHOW lists every idle session: those rows are decoded only if one is looked up.
        return self.use_show

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[ProcesslistSection]:
        # SHOW lists idle sessions too (only who they are is kept of those), and captured output
        # replayed as is may.
        identities = {int(row["id"]): SessionIdentity(row["user"], row["host"], row["db"]) for row in rows}
        huge = any(_is_huge(row["info"]) for row in rows)
        sessions = [_session(row) for row in rows if str(row["command"]) not in IDLE_COMMANDS]
        return self._output(sessions, identities, len(rows), huge, ctx)

    def parse_raw(self, rows: RawRows, ctx: ParseContext) -> CollectorOutput[ProcesslistSection]:
        """parse() that decodes only the active sessions' rows, and of the idle ones their command.

        An active row whose bytes are the ones the previous read had (our own polling session,
        a long statement whose Time has not ticked) gets that read's Session again: the same
        bytes of the same result shape decode to the same row. Sessions are never changed
        once made (derive.py only reads them; a snapshot copies the state it keeps).
        """
        command_at, info_at = rows.names.index("command"), rows.names.index("info")
        if not rows.is_text(command_at):  # not a string column: decoded, as parse() reads it
            return self.parse(rows.rows(), ctx)
        if rows.names is not self._shape_names:  # another result shape: nothing of the last one holds
            self._shape_names = rows.names
            self._idle = tuple(_length_prefixed(rows.encode(command_at, c)) for c in IDLE_COMMANDS)
            self._previous = {}
            self._heads = RowHeads()
        previous, current = self._previous, {}
        sessions: list[Session] = []
        huge = False
        active, self._heads = _active_packets(rows, command_at, self._idle, self._heads)
        for packet in active:
            session = previous.get(packet)
            if session is None:
                row = rows.row(packet)
                if str(row["command"]) in IDLE_COMMANDS:
                    continue
                session = _session(row)
            current[packet] = session
            sessions.append(session)
        self._previous = current
        # A statement over the limit needs a packet over it (a character is one byte at least).
        if max(map(len, rows.packets), default=0) > SHOW_MAX_STATEMENT_CHARS:
            huge = any(
                len(packet) > SHOW_MAX_STATEMENT_CHARS and _is_huge(rows.value(packet, info_at))
                for packet in rows.packets
            )
        return self._output(sessions, SessionListing(rows), len(rows), huge, ctx)

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


def _length_prefixed(value: bytes) -> bytes:
    assert len(value) < 0xFB  # an idle command's name: its length fits the one-byte form
    return bytes((len(value),)) + value


# A row's first bytes through its command, as sent (None when not read so: a long value before
# it), and whether that command is an idle one.
RowHead = tuple[bytes | None, bool]


@dataclass
class RowHeads:
    """Each row's head of a SHOW read, in its order, and which rows were active."""

    heads: list[RowHead] = field(default_factory=list)
    # Every head's bytes, when each row's is known; else None.
    prefixes: list[bytes] | None = None
    active_at: list[int] = field(default_factory=list)


def _active_packets(
    rows: RawRows, command_at: int, idle: tuple[bytes, ...], last: RowHeads
) -> tuple[list[bytes], RowHeads]:
    """The rows whose command is not one of `idle` (length-prefixed, as sent), without decoding;
    and each row's head, for the next read.

    Sessions are listed in the same order read after read, and an idle one's id, user, host, db
    and command stay the same (its Time moves, after them): a row that begins with the same
    row's head of the last read has the same command, so is told apart by one comparison, and
    a read whose every row does (an idle server's, poll after poll) by one pass in C.
    """
    packets = rows.packets
    prefixes = last.prefixes
    if (
        prefixes is not None
        and len(prefixes) == len(packets)
        and all(map(bytes.startswith, packets, prefixes))
    ):
        return [packets[at] for at in last.active_at], last
    read = RowHeads()
    for index, packet in enumerate(packets):
        if (
            index < len(last.heads)
            and (head := last.heads[index])[0] is not None
            and packet.startswith(head[0])
        ):
            pass
        else:
            head = _row_head(rows, packet, command_at, idle)
        read.heads.append(head)
        if not head[1]:
            read.active_at.append(index)
    known = [prefix for prefix, _ in read.heads if prefix is not None]
    read.prefixes = known if len(known) == len(read.heads) else None
    return [packets[at] for at in read.active_at], read


def _row_head(rows: RawRows, packet: bytes, command_at: int, idle: tuple[bytes, ...]) -> RowHead:
    """Steps over the columns before the command inline (a one-byte length, or NULL); a row with
    a longer value before it (a host or db of 251+ bytes) is read as RawRows.raw reads it."""
    pos = 0
    for _ in range(command_at):
        first = packet[pos] if pos < len(packet) else 0xFB
        if first < 0xFB:
            pos += 1 + first
        elif first == 0xFB:
            pos += 1
        else:
            (command,) = rows.raw(packet, command_at)
            return None, command is not None and _length_prefixed(command) in idle
    if pos >= len(packet) or packet[pos] >= 0xFB:  # a short row, or NULL: not idle
        return None, False
    end = pos + 1 + packet[pos]
    if end > len(packet):  # a command cut short: not idle, and no head to compare a later row with
        return None, False
    return packet[:end], packet.startswith(idle, pos)


def _is_huge(info: object) -> bool:
    return isinstance(info, str) and len(info) > SHOW_MAX_STATEMENT_CHARS


def _is_own_poll(session: Session) -> bool:
    info = session.info or ""
    return "information_schema.PROCESSLIST" in info or info.strip().upper() == SHOW_SQL
