"""The poll's statements on each live MariaDB line (poller/connection.py run_multi, through the
driver's cursor): the values a collector sees, failures per statement, and a connection never
reused out of step with its answers."""

from __future__ import annotations

import asyncio
import datetime
import decimal

import pytest

from poolscope.config import TargetConfig
from poolscope.poller.collectors import all_collectors
from poolscope.poller.connection import TargetConnection, error_code, run_multi
from poolscope.poller.discovery import discovery_statements
from poolscope_dev.sandbox import MariaDBSandbox

from .helpers import multi_statement_connection

# Values of every kind the protocol encodes differently: NULL, integers, decimals, floats, dates,
# binary strings, JSON, and strings whose length needs a 1-, 2- and 3-byte length prefix.
TYPED = (
    "SELECT NULL AS n, 1 AS i, -9223372036854775808 AS big, 18446744073709551615 AS ubig,"
    " CAST(1.25 AS DECIMAL(10,3)) AS d, 1e300 AS f, NOW(6) AS ts, CURDATE() AS day,"
    " TIMEDIFF('10:00:00', '08:30:00') AS span, UNHEX('FF') AS bin, x'00ff' AS hex,"
    " JSON_OBJECT('a', 1) AS js, REPEAT('é', 300) AS s2, REPEAT('x', 70000) AS s3, '' AS empty,"
    " 'Ünïcode ✓' AS utf"
)


async def test_every_statement_of_a_poll_answers_and_values_keep_their_types(line_dsn: str) -> None:
    connection = TargetConnection(TargetConfig(name="statements", dsn=line_dsn, extra_port=0))
    await connection.connect()
    assert connection.server is not None
    # Every statement a poll of this server sends, discovery's included, and the typed probe.
    statements = [
        *discovery_statements(),
        *(
            s
            for c in all_collectors()
            if c.applies(connection.server) is None
            for s in c.statements(connection.server)
        ),
        TYPED,
    ]
    try:
        got = await connection.run_batch(statements)
        assert [r.error for r in got] == [None] * len(statements)
        assert all(name == name.lower() for r in got for row in r.rows or [] for name in row), "lower-cased"
        typed = got[-1].rows
        assert typed is not None
        row = typed[0]
        assert {k: row[k] for k in ("n", "i", "big", "ubig", "d", "f", "bin", "hex", "empty", "utf")} == {
            "n": None,
            "i": 1,
            "big": -9223372036854775808,
            "ubig": 18446744073709551615,
            "d": decimal.Decimal("1.250"),
            "f": 1e300,
            "bin": b"\xff",
            "hex": b"\x00\xff",
            "empty": "",
            "utf": "Ünïcode ✓",
        }
        assert isinstance(row["ts"], datetime.datetime) and isinstance(row["day"], datetime.date)
        assert row["span"] == datetime.timedelta(hours=1, minutes=30)
        assert row["s2"] == "é" * 300 and len(row["s3"]) == 70000 and '"a"' in row["js"]
    finally:
        await connection.close()


async def test_a_failed_statement_ends_the_answer_and_the_connection_stays_usable(
    mariadb_line: MariaDBSandbox,
) -> None:
    conn = await multi_statement_connection(mariadb_line)
    try:
        got = await run_multi(conn, ["SELECT 1 AS a", "SELECT * FROM no_such_db.t", "SELECT 3 AS c"])
        assert [r.rows for r in got] == [[{"a": 1}], None]
        assert got[1].error is not None and error_code(got[1].error) == 1142  # SELECT denied
        # A statement without a result set (an OK packet) reads as no rows.
        got = await run_multi(conn, ["DO 1", "SELECT 2 AS b"])
        assert [(r.rows, r.error) for r in got] == [([], None), ([{"b": 2}], None)]
        got = await run_multi(conn, ["SELECT * FROM no_such_db.t", "SELECT 2 AS b"])
        assert len(got) == 1 and error_code(got[0].error or Exception()) == 1142, "the first one failed"
        assert [r.rows for r in await run_multi(conn, ["SELECT 4 AS d"])] == [[{"d": 4}]]
    finally:
        conn.close()


async def test_a_cancelled_read_closes_the_connection(mariadb_line: MariaDBSandbox) -> None:
    conn = await multi_statement_connection(mariadb_line)
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(run_multi(conn, ["SELECT SLEEP(5)"]), timeout=0.3)
        # Its answer would arrive later, out of step with the next statement: never reused.
        assert not conn.connected
    finally:
        conn.close()


async def test_a_batch_goes_on_after_a_failed_statement(line_dsn: str) -> None:
    connection = TargetConnection(TargetConfig(name="statements", dsn=line_dsn, extra_port=0))
    await connection.connect()
    try:
        got = await connection.run_batch(["SELECT 1 AS a", "SELECT * FROM no_such_db.t", "SELECT 3 AS c"])
        assert [r.rows for r in got] == [[{"a": 1}], None, [{"c": 3}]]
    finally:
        await connection.close()
