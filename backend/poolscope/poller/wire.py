"""Reads a multi-statement's result sets from the wire in one pass: the poll's hot path.

aiomysql reads every packet with two awaits on the stream and parses every column definition
again on every statement; for a poll of a dozen small result sets that was most of the poller's
CPU. This reader takes whatever bytes have arrived, splits them into
packets without awaiting (poller/packets.py), decodes a result set's column definitions once per
distinct definition (a poll sends the same statements every second), and does not decode again
what the statement's last answer already held (MultiReader). Values are decoded exactly as
aiomysql's buffered cursor decodes them (the connection's own decoders and encodings), so a
collector sees the same Python values either way (tests/poller/test_wire.py compares them).

It drives aiomysql's connection through the command it sends (Connection._execute_command) and
the stream it reads (Connection._reader), both of the pinned aiomysql (backend/requirements.lock).
"""

from __future__ import annotations

import operator
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiomysql
from pymysql import err
from pymysql.constants import COMMAND, CR, FIELD_TYPE, SERVER_STATUS
from pymysql.converters import through
from pymysql.protocol import FieldDescriptorPacket

from poolscope.poller.packets import Packets

_TEXT_TYPES = {
    FIELD_TYPE.BIT,
    FIELD_TYPE.BLOB,
    FIELD_TYPE.LONG_BLOB,
    FIELD_TYPE.MEDIUM_BLOB,
    FIELD_TYPE.STRING,
    FIELD_TYPE.TINY_BLOB,
    FIELD_TYPE.VAR_STRING,
    FIELD_TYPE.VARCHAR,
    FIELD_TYPE.GEOMETRY,
}
_BINARY_CHARSET = 63
_FIRST_BYTE = operator.itemgetter(0)
# Distinct result-set shapes remembered per connection; a poll has about a dozen.
_MAX_SHAPES = 128
# Statements whose last result set is remembered per connection; a poll sends about a dozen.
_MAX_ANSWERS = 64
# A remembered answer's bytes at most (a processlist of ~5,000 idle sessions): per target, so a
# fleet's pollers hold a bounded copy of what each server last answered.
_MAX_ANSWER_BYTES = 1 << 20

Decoder = tuple[str | None, Callable[[Any], Any] | None]


@dataclass(frozen=True)
class Shape:
    """A result set's column names (lower-cased, as collectors read them) and how to decode each."""

    names: tuple[str, ...]
    decoders: tuple[Decoder, ...]


class RawRows:
    """A result set's rows as they came off the wire, each decoded only when asked for.

    For a statement whose rows are mostly skipped: SHOW FULL PROCESSLIST lists every idle
    session, of which the poll needs nothing unless one of them is queued or holds a
    transaction (collectors/processlist.py). Decoding a column is exactly what the decoded form
    does (_row), so either form gives a collector the same values.
    """

    __slots__ = ("_packets", "_shape")

    def __init__(self, shape: Shape, packets: tuple[bytes, ...]) -> None:
        # Immutable (a tuple, read-only attributes): the reader hands the same RawRows to the
        # next poll when the statement's answer did not change (MultiReader).
        self._shape = shape
        self._packets = packets

    @property
    def names(self) -> tuple[str, ...]:
        return self._shape.names

    @property
    def packets(self) -> tuple[bytes, ...]:
        return self._packets

    def __len__(self) -> int:
        return len(self.packets)

    def row(self, packet: bytes) -> dict[str, Any]:
        return _row(packet, self._shape)

    def rows(self) -> list[dict[str, Any]]:
        return [_row(packet, self._shape) for packet in self.packets]

    def raw(self, packet: bytes, *indexes: int) -> list[bytes | None]:
        """Columns `indexes` (ascending) of a row as sent (None for NULL or a short row), not decoded."""
        return _fields(packet, indexes)

    def is_text(self, index: int) -> bool:
        """Column `index` decodes to its bytes' text and nothing more (a string column): a value
        can then be compared as bytes, encoded as the column is, without decoding each row's."""
        encoding, converter = self._shape.decoders[index]
        return encoding is not None and converter is None

    def encode(self, index: int, text: str) -> bytes:
        """`text` as column `index` carries it (is_text columns)."""
        encoding = self._shape.decoders[index][0]
        assert encoding is not None
        return text.encode(encoding)

    def decode(self, index: int, data: bytes | None) -> Any:
        """Column `index`'s bytes (from raw()) decoded as _row decodes them."""
        return None if data is None else _decode(data, self._shape.decoders[index])

    def value(self, packet: bytes, index: int) -> Any:
        """Column `index` of a row, decoded as _row decodes it."""
        return self.decode(index, _fields(packet, (index,))[0])


@dataclass
class StatementResult:
    """One statement's outcome: rows (an OK packet gives none) or the server's error for it.

    `raw` instead of `rows` when the caller asked for that statement's rows undecoded.
    """

    rows: list[dict[str, Any]] | None
    error: BaseException | None
    duration_ms: float
    raw: RawRows | None = None


def _lenenc_int(data: bytes, pos: int) -> tuple[int | None, int]:
    first = data[pos]
    if first < 0xFB:
        return first, pos + 1
    if first == 0xFB:
        return None, pos + 1
    if first == 0xFC:
        return data[pos + 1] | data[pos + 2] << 8, pos + 3
    if first == 0xFD:
        return data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16, pos + 4
    return struct.unpack_from("<Q", data, pos + 1)[0], pos + 9


def _is_eof(packet: bytes) -> bool:
    return packet[0] == 0xFE and len(packet) < 9


def _more_after_eof(packet: bytes) -> bool:
    return bool(struct.unpack_from("<H", packet, 3)[0] & SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS)


def _more_after_ok(packet: bytes) -> bool:
    _, pos = _lenenc_int(packet, 1)  # affected rows
    _, pos = _lenenc_int(packet, pos)  # last insert id
    return bool(struct.unpack_from("<H", packet, pos)[0] & SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS)


def redacted_args(args: tuple[Any, ...], redact: Callable[[str], str]) -> tuple[Any, ...]:
    """An exception's args with every text passed through `redact`."""
    return tuple(redact(a) if isinstance(a, str) else a for a in args)


def _server_error(packet: bytes, conn: aiomysql.Connection) -> err.MySQLError:
    """The server's error, told without the DSN's userinfo (poller/connection.py _Connection)."""
    try:
        err.raise_mysql_exception(packet)
    except err.MySQLError as exc:
        redact = getattr(conn, "redact", None)
        if redact is not None:
            exc.args = redacted_args(exc.args, redact)
        return exc
    raise AssertionError("raise_mysql_exception always raises")  # pragma: no cover


def _shape(conn: aiomysql.Connection, definitions: list[bytes]) -> Shape:
    """Decoders as aiomysql's buffered result derives them (MySQLResult._get_descriptions)."""
    names: list[str] = []
    decoders: list[Decoder] = []
    for data in definitions:
        field = FieldDescriptorPacket(data, conn.encoding)
        names.append(field.name.lower())
        field_type = field.type_code
        encoding: str | None
        if not conn.use_unicode:
            encoding = None
        elif field_type == FIELD_TYPE.JSON:
            encoding = conn.encoding
        elif field_type in _TEXT_TYPES:
            encoding = None if field.charsetnr == _BINARY_CHARSET else conn.encoding
        else:
            encoding = "ascii"
        converter = conn.decoders.get(field_type)
        if converter is through:
            converter = None
        decoders.append((encoding, converter))
    return Shape(tuple(names), tuple(decoders))


def _fields(packet: bytes, indexes: tuple[int, ...]) -> list[bytes | None]:
    """Columns `indexes` (ascending) of a row as sent, in one walk over the row; None for NULL
    or past a short row's end. Lengths under 251 (one byte) are stepped over inline."""
    out: list[bytes | None] = []
    pos = 0
    end = len(packet)
    column = 0
    for index in indexes:
        while column < index and pos < end:
            first = packet[pos]
            if first < 0xFB:
                pos += 1 + first
            elif first == 0xFB:
                pos += 1
            else:
                length, pos = _lenenc_int(packet, pos)
                pos += length or 0
            column += 1
        if pos >= end:
            out.append(None)
            continue
        length, pos = _lenenc_int(packet, pos)
        column += 1
        out.append(None if length is None else packet[pos : pos + length])
        pos += length or 0
    return out


def _decode(data: bytes, decoder: Decoder) -> Any:
    encoding, converter = decoder
    value: Any = data if encoding is None else data.decode(encoding)
    return value if converter is None else converter(value)


def _row(packet: bytes, shape: Shape) -> dict[str, Any]:
    # Each value is decoded as _decode does, inlined: a call per column of every row was a
    # measurable share of a poll. Change the two together.
    values: list[Any] = []
    pos = 0
    end = len(packet)
    for encoding, converter in shape.decoders:
        if pos >= end:  # a row shorter than its columns (PyMySQL pads it the same way)
            break
        length: int | None = packet[pos]
        if packet[pos] < 0xFB:  # a value under 251 bytes: its one-byte length inline
            pos += 1
        else:
            length, pos = _lenenc_int(packet, pos)
        if length is None:
            values.append(None)
            continue
        data: Any = packet[pos : pos + length]
        pos += length
        if encoding is not None:
            data = data.decode(encoding)
        if converter is not None:
            data = converter(data)
        values.append(data)
    return dict(zip(shape.names, values, strict=False))


@dataclass(frozen=True)
class _Answer:
    """A statement's last result set as received (every packet of it) and what it decoded to."""

    packets: list[bytes]
    shape: Shape
    rows: list[dict[str, Any]] | None  # the decoded form; handed out as copies only
    raw: RawRows | None
    more: bool

    def result(self, started: float) -> StatementResult:
        if self.raw is not None:
            return StatementResult(None, None, _ms(started), self.raw)
        assert self.rows is not None
        return StatementResult([row.copy() for row in self.rows], None, _ms(started))


class MultiReader:
    """Sends one multi-statement and reads its result sets; remembers what it read between polls.

    Per connection: the decoders of each distinct result shape, and each statement's last result
    set. An idle server answers most statements of a poll with the very bytes of the previous
    poll: such a result set is not decoded again (its rows are handed out as fresh copies of the
    ones decoded before, its undecoded form is the same immutable RawRows), and a row whose
    bytes were in the statement's last answer is copied from there.
    """

    def __init__(self) -> None:
        self._shapes: dict[bytes, Shape] = {}
        self._answers: dict[str, _Answer] = {}
        self._conn: aiomysql.Connection | None = None

    def _shape_for(self, conn: aiomysql.Connection, definitions: list[bytes]) -> Shape:
        key = b"\x00".join(definitions)
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) >= _MAX_SHAPES:
                self._shapes.clear()
            shape = self._shapes[key] = _shape(conn, definitions)
        return shape

    async def run(
        self,
        conn: aiomysql.Connection,
        statements: Sequence[str],
        raw: Sequence[bool] = (),
        *,
        remember: bool = False,
    ) -> list[StatementResult]:
        """Result sets of `statements` (sent as one multi-statement) in order; it stops after the
        first one that failed, as the server does. Raises when the connection itself breaks. A
        statement whose `raw` flag is set has its rows handed over undecoded (StatementResult.raw).
        `remember`: keep each answer (up to _MAX_ANSWER_BYTES) to compare the next one with; only
        for statements sent again and again (a poll's), not one-off reads (a snapshot's)."""
        if conn is not self._conn:  # what was read on another connection is not compared with
            self._conn = conn
            self._shapes.clear()
            self._answers.clear()
        sql = ";\n".join(statements)
        await conn._execute_command(COMMAND.COM_QUERY, sql.encode(conn.encoding, "surrogateescape"))
        packets = Packets(conn)
        results: list[StatementResult] = []
        started = time.perf_counter()
        more = True
        try:
            while more:
                index = len(results)
                # A server that answers more result sets than statements (a procedure's extra set)
                # has them read and dropped, as aiomysql drops them before the next command.
                statement = statements[index] if index < len(statements) else None
                result, more = await self._one(
                    conn, packets, statement if remember else None, started, index < len(raw) and raw[index]
                )
                if statement is not None:
                    results.append(result)
                started = time.perf_counter()
        except BaseException:
            # Whatever stopped the read (a value that would not decode, a cancel) left the rest
            # of the answer on the stream: the next statement would read it. Never reuse it.
            conn.close()
            self._conn = None
            raise
        if not packets.drained:
            conn.close()
            self._conn = None
            raise err.InternalError("the server sent more than its answer to the statements")
        if len(self._answers) > _MAX_ANSWERS:  # statements that changed (a processlist form, a lookup)
            self._answers = {s: a for s in statements if (a := self._answers.get(s)) is not None}
        return results

    async def _one(
        self,
        conn: aiomysql.Connection,
        packets: Packets,
        statement: str | None,
        started: float,
        raw: bool = False,
    ) -> tuple[StatementResult, bool]:
        """The next statement's result set, and whether another follows."""
        if packets.at == len(packets.queue):
            await packets.fetch()
        queue = packets.queue
        begin = packets.at
        first = queue[begin]
        packets.at = begin + 1
        kind = first[0]
        if kind == 0xFF:  # the server stops a multi-statement at its first error
            return StatementResult(None, _server_error(first, conn), _ms(started)), False
        if kind == 0x00:
            return StatementResult([], None, _ms(started)), _more_after_ok(first)
        if kind == 0xFB:
            raise err.OperationalError(CR.CR_COMMANDS_OUT_OF_SYNC, "LOCAL INFILE request refused")
        last = self._answers.get(statement) if statement is not None else None
        if last is not None and (last.raw is not None) == raw:
            # The same packets as last time (compared as they arrive): the same result set.
            size = len(last.packets)
            while len(queue) - begin < size and queue[begin:] == last.packets[: len(queue) - begin]:
                await packets.fetch()
            if queue[begin : begin + size] == last.packets:
                packets.at = begin + size
                return last.result(started), last.more
        columns, _ = _lenenc_int(first, 0)
        while len(queue) - begin < (columns or 0) + 2:
            await packets.fetch()
        definitions = queue[begin + 1 : begin + 1 + (columns or 0)]
        at = begin + 1 + (columns or 0)
        if not _is_eof(queue[at]):
            raise err.InternalError("Protocol error, expecting EOF after the column definitions")
        shape = self._shape_for(conn, definitions)
        at += 1
        # The rows run up to the first packet that starts with 0xFE or 0xFF, found by one scan
        # of the packets' first bytes rather than a look at each: the EOF (or an error) that ends
        # them, else a row whose first value is 16 MB or more.
        rows: list[bytes] = []
        # The queue holds the rest of the poll's answer too: its first bytes are scanned a window
        # at a time, first as many as this statement's rows last time (and its EOF), not to the end.
        window = max(len(last.packets) - (columns or 0) - 2, 8) if last is not None else 64
        while True:
            scan = queue[at : at + window]
            count = _before_marker(bytes(map(_FIRST_BYTE, scan)))
            rows += scan if count == len(scan) else scan[:count]
            at += count
            if count == len(scan):  # no marker in the window
                if at == len(queue):
                    packets.at = at
                    await packets.fetch()
                window *= 2
                continue
            packet = queue[at]
            at += 1
            if packet[0] == 0xFF:  # an error while rows were being sent ends the statement
                packets.at = at
                return StatementResult(None, _server_error(packet, conn), _ms(started)), False
            if _is_eof(packet):
                break
            rows.append(packet)
        packets.at = at
        more = _more_after_eof(packet)
        if raw:
            answer = _Answer(queue[begin:at], shape, None, RawRows(shape, tuple(rows)), more)
        else:
            # Rows sent last time are copied from what they decoded to then (the same shape).
            known: dict[bytes, dict[str, Any]] = {}
            if last is not None and last.rows and last.shape is shape:
                first_row = len(last.packets) - len(last.rows) - 1
                known = dict(zip(last.packets[first_row:-1], last.rows, strict=True))
            decoded = [known.get(row) or _row(row, shape) for row in rows]
            answer = _Answer(queue[begin:at], shape, decoded, None, more)
        if statement is not None:
            if sum(map(len, answer.packets)) <= _MAX_ANSWER_BYTES:
                self._answers[statement] = answer
            else:  # a huge answer (a busy processlist) is decoded each time rather than held
                self._answers.pop(statement, None)
        return answer.result(started), more


def _before_marker(firsts: bytes) -> int:
    """How many of the packets (their first bytes) come before the first one starting 0xFE or 0xFF."""
    eof, error = firsts.find(b"\xfe"), firsts.find(b"\xff")
    if eof < 0:
        return len(firsts) if error < 0 else error
    return eof if error < 0 else min(eof, error)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
