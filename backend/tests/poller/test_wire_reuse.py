"""What the poll's reader (poller/wire.py) carries from one answer to the next, on a live server.

The reader does not decode again a result set whose packets are the ones of the statement's last
answer, nor a row whose bytes it decoded last time. Every change between two reads must show,
a column's type included (the same bytes decode otherwise), and nothing handed out may be
shared with what the reader keeps for the next read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import aiomysql
import pytest
from pymysql.cursors import Cursor

from poolscope.poller.packets import Packets
from poolscope.poller.wire import MultiReader
from poolscope_dev.sandbox import SBTEST_DB, SBTEST_PASSWORD, SBTEST_USER, MariaDBSandbox

from .helpers import multi_statement_connection

TABLE = "wire_reuse_probe"
READ = f"SELECT id, v FROM {TABLE} ORDER BY id"
NOTHING = f"SELECT id, v FROM {TABLE} WHERE id < 0"


@pytest.fixture
async def conn(mariadb: MariaDBSandbox) -> AsyncIterator[aiomysql.Connection]:
    """A connection that may read the probe table, as the poller's reads."""
    connection = await multi_statement_connection(mariadb, SBTEST_USER, SBTEST_PASSWORD, SBTEST_DB)
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture
def writer(mariadb: MariaDBSandbox) -> Iterator[Cursor]:
    """A cursor that changes the probe table between two reads."""
    conn = mariadb.connect(SBTEST_USER, database=SBTEST_DB)
    with conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cur.execute(f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, v INT)")
        cur.execute(f"INSERT INTO {TABLE} VALUES (1, 10), (2, 20), (3, 30)")
    try:
        yield conn.cursor()
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.close()


async def test_a_change_between_reads_shows_and_unchanged_rows_read_the_same(
    conn: aiomysql.Connection, writer: Cursor, mariadb: MariaDBSandbox
) -> None:
    reader = MultiReader()
    (first,) = await reader.run(conn, [READ], remember=True)
    assert first.rows == [{"id": 1, "v": 10}, {"id": 2, "v": 20}, {"id": 3, "v": 30}]
    (same,) = await reader.run(conn, [READ], remember=True)  # the same bytes: not decoded again
    assert same.rows == first.rows
    writer.execute(f"UPDATE {TABLE} SET v = 21 WHERE id = 2")
    (changed,) = await reader.run(conn, [READ], remember=True)  # rows 1 and 3 from before, row 2 decoded
    assert changed.rows == [{"id": 1, "v": 10}, {"id": 2, "v": 21}, {"id": 3, "v": 30}]
    writer.execute(f"DELETE FROM {TABLE} WHERE id = 1")
    writer.execute(f"INSERT INTO {TABLE} VALUES (4, 10)")
    (moved,) = await reader.run(conn, [READ], remember=True)
    assert moved.rows == [{"id": 2, "v": 21}, {"id": 3, "v": 30}, {"id": 4, "v": 10}]
    # The same value bytes under another column type decode to that type.
    writer.execute(f"ALTER TABLE {TABLE} MODIFY v VARCHAR(8)")
    (retyped,) = await reader.run(conn, [READ], remember=True)
    assert retyped.rows == [{"id": 2, "v": "21"}, {"id": 3, "v": "30"}, {"id": 4, "v": "10"}]
    writer.execute(f"ALTER TABLE {TABLE} ADD COLUMN w INT DEFAULT 7")
    (widened,) = await reader.run(conn, [f"SELECT * FROM {TABLE} ORDER BY id"], remember=True)
    assert widened.rows is not None and widened.rows[0] == {"id": 2, "v": "21", "w": 7}


async def test_what_a_read_hands_out_is_not_what_the_next_read_reuses(
    conn: aiomysql.Connection, writer: Cursor, mariadb: MariaDBSandbox
) -> None:
    reader = MultiReader()
    (first,) = await reader.run(conn, [READ], remember=True)
    assert first.rows is not None
    first.rows[0]["v"] = -1  # a collector that changed its rows...
    first.rows.append({"id": 9, "v": 9})
    (second,) = await reader.run(conn, [READ], remember=True)  # ...changed nothing the next read gives
    assert second.rows == [{"id": 1, "v": 10}, {"id": 2, "v": 20}, {"id": 3, "v": 30}]
    assert second.rows is not first.rows and all(
        a is not b for a, b in zip(first.rows[:3], second.rows, strict=True)
    )
    writer.execute(f"UPDATE {TABLE} SET v = 31 WHERE id = 3")
    second.rows[0]["v"] = -2
    (third,) = await reader.run(conn, [READ], remember=True)  # rows carried over one by one, also copies
    assert third.rows == [{"id": 1, "v": 10}, {"id": 2, "v": 20}, {"id": 3, "v": 31}]

    # The undecoded form is handed over as it is when unchanged: it cannot be changed.
    (raw,) = await reader.run(conn, [READ], [True], remember=True)
    (again,) = await reader.run(conn, [READ], [True], remember=True)
    assert raw.raw is not None and again.raw is raw.raw
    assert isinstance(raw.raw.packets, tuple)
    with pytest.raises(AttributeError):
        raw.raw.packets = ()  # type: ignore[misc]
    assert raw.raw.rows() == third.rows
    # Decoded and undecoded reads of one statement do not stand in for each other.
    (decoded,) = await reader.run(conn, [READ], remember=True)
    assert decoded.raw is None and decoded.rows == third.rows


async def test_reuse_follows_each_statement_through_batches_that_change(
    conn: aiomysql.Connection, writer: Cursor, mariadb: MariaDBSandbox
) -> None:
    reader = MultiReader()
    # A statement joins the batch (a slower source's turn): the others still read right,
    # the sequence numbers of their packets shifted by the new one's.
    for batch in ([READ, NOTHING], ["SELECT 1 AS one", READ, NOTHING], [NOTHING, READ]):
        results = await reader.run(conn, batch, remember=True)
        by_statement = dict(zip(batch, results, strict=True))
        assert by_statement[READ].rows == [{"id": 1, "v": 10}, {"id": 2, "v": 20}, {"id": 3, "v": 30}]
        assert by_statement[NOTHING].rows == []
    writer.execute(f"UPDATE {TABLE} SET v = 11 WHERE id = 1")
    _, read = await reader.run(conn, [NOTHING, READ], remember=True)
    assert read.rows == [{"id": 1, "v": 11}, {"id": 2, "v": 20}, {"id": 3, "v": 30}]
    # A new connection (a reconnect) starts over.
    other = await multi_statement_connection(mariadb, SBTEST_USER, SBTEST_PASSWORD, SBTEST_DB)
    try:
        (fresh,) = await reader.run(other, [READ], remember=True)
        assert fresh.rows == read.rows
    finally:
        other.close()


class _Chunks:
    """A stream that hands over the given bytes in pieces of `size`."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data, self._size, self._at = data, size, 0

    async def read(self, limit: int) -> bytes:
        chunk = self._data[self._at : self._at + min(limit, self._size)]
        self._at += len(chunk)
        return chunk


def _frame(payloads: list[bytes]) -> bytes:
    """MySQL packets for the payloads, a payload of 16 MB or more split as the protocol does."""
    out = bytearray()
    seq = 1
    for payload in payloads:
        while True:
            part, payload = payload[:0xFFFFFF], payload[0xFFFFFF:]
            out += len(part).to_bytes(3, "little") + bytes([seq]) + part
            seq = (seq + 1) % 256
            if len(part) < 0xFFFFFF:
                break
    return bytes(out)


@pytest.mark.parametrize(
    ("chunk", "big"), [(1, False), (3, False), (5, False), (4096, True), (1 << 25, True)]
)
async def test_packets_are_split_wherever_the_reads_end(chunk: int, big: bool) -> None:
    payloads = [bytes([n % 250]) * (n % 7 + 1) for n in range(300)]  # past 256 sequence numbers
    if big:  # 16 MB - 1, exactly 16 MB (an empty packet follows it), and over 16 MB
        payloads[100:100] = [b"a" * 0xFFFFFE, b"b" * 0xFFFFFF, b"c" * (0xFFFFFF + 5)]

    class Conn:
        _reader = _Chunks(_frame(payloads), chunk)

    packets = Packets(Conn())
    got = [await packets.next() for _ in payloads]
    assert got == payloads and packets.drained


async def test_a_packet_out_of_sequence_is_refused() -> None:
    data = bytearray(_frame([b"x", b"y"]))
    data[5 + 3] = 7  # the second packet's sequence number

    class Conn:
        _reader = _Chunks(bytes(data), 1 << 20)

    packets = Packets(Conn())
    with pytest.raises(Exception, match="Packet sequence number wrong"):
        await packets.next()


async def test_only_remembered_answers_are_kept_and_none_past_the_byte_limit(
    conn: aiomysql.Connection, writer: Cursor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A one-off read (an incident snapshot's, a lookup) is not held until the connection closes.
    reader = MultiReader()
    (once,) = await reader.run(conn, [READ])
    assert once.rows and reader._answers == {}
    (polled,) = await reader.run(conn, [READ], remember=True)
    assert polled.rows == once.rows and set(reader._answers) == {READ}
    # An answer over the limit is decoded each time rather than held, and replaces no stale one.
    monkeypatch.setattr("poolscope.poller.wire._MAX_ANSWER_BYTES", 16)
    writer.execute(f"UPDATE {TABLE} SET v = v + 1")
    (big,) = await reader.run(conn, [READ], remember=True)
    assert [r["v"] for r in big.rows or []] == [11, 21, 31] and reader._answers == {}


async def test_rows_past_the_scan_window_are_all_read_as_the_row_count_changes(
    conn: aiomysql.Connection, writer: Cursor
) -> None:
    """A result set's end is looked for a window of packets at a time (as many as last time, or
    64 the first time): a read of more rows than that, fewer, none, and in both forms, with
    statements after it, reads every row and leaves the next statement's answer to it."""
    reader = MultiReader()
    for count in (3, 200, 2, 0, 150, 150, 1):
        writer.execute(f"DELETE FROM {TABLE}")
        if count:
            writer.execute(
                f"INSERT INTO {TABLE} VALUES " + ", ".join(f"({i}, {i * 10})" for i in range(count))
            )
        expected = [{"id": i, "v": i * 10} for i in range(count)]
        decoded, raw, after = await reader.run(
            conn, [READ, READ, "SELECT 7 AS x"], [False, True], remember=True
        )
        assert decoded.rows == expected
        assert raw.raw is not None and raw.raw.rows() == expected
        assert after.rows == [{"x": 7}]
