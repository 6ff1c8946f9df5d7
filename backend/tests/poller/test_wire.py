"""The poll's one-pass result reader (poller/wire.py) against aiomysql's own cursor on a live server.

The reader replaced aiomysql's buffered cursor on the poll path for CPU: every value a collector
sees must be what that cursor would have handed it, failures must stay per statement, and the
connection must stay usable after each answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiomysql
import pytest

from poolscope.config import TargetConfig
from poolscope.poller.collectors import all_collectors
from poolscope.poller.connection import TargetConnection, error_code
from poolscope.poller.discovery import discovery_statements
from poolscope.poller.wire import MultiReader
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


async def _cursor_rows(conn: aiomysql.Connection, statements: list[str]) -> list[list[dict[str, Any]]]:
    """aiomysql's buffered cursor, as the poller read before (lower-cased names)."""
    out = []
    async with conn.cursor() as cursor:
        await cursor.execute(";\n".join(statements))
        while True:
            names = [d[0].lower() for d in cursor.description or ()]
            out.append([dict(zip(names, row, strict=True)) for row in await cursor.fetchall()])
            if not await cursor.nextset():
                break
    return out


def _types(rows: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(name, type(value).__name__) for row in rows for name, value in row.items() if value is not None}


async def test_values_match_aiomysql_cursor(mariadb_line: MariaDBSandbox, line_dsn: str) -> None:
    connection = TargetConnection(TargetConfig(name="wire", dsn=line_dsn, extra_port=0))
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
    conn = await multi_statement_connection(mariadb_line)
    try:
        expected = await _cursor_rows(conn, statements)
        reader = MultiReader()
        for _ in range(2):  # the second read decodes with the remembered result shapes
            got = await reader.run(conn, statements, remember=True)
            assert [r.error for r in got] == [None] * len(statements)
            for statement, result, rows in zip(statements, got, expected, strict=True):
                # Counters, sessions and clocks move between two reads: names and types must agree.
                assert _types(result.rows or []) == _types(rows), statement
        # Discovery's variables do not move: the same values.
        assert [r.rows for r in got[: len(discovery_statements())]] == expected[: len(discovery_statements())]
        typed = got[-1].rows
        assert typed is not None
        assert {k: v for k, v in typed[0].items() if k not in ("ts", "day")} == {
            k: v for k, v in expected[-1][0].items() if k not in ("ts", "day")
        }
        assert len(typed[0]["s3"]) == 70000 and typed[0]["n"] is None and typed[0]["bin"] == b"\xff"
    finally:
        conn.close()
        await connection.close()


async def test_a_failed_statement_ends_the_answer_and_the_connection_stays_usable(
    mariadb_line: MariaDBSandbox,
) -> None:
    conn = await multi_statement_connection(mariadb_line)
    try:
        reader = MultiReader()
        got = await reader.run(conn, ["SELECT 1 AS a", "SELECT * FROM no_such_db.t", "SELECT 3 AS c"])
        assert [r.rows for r in got] == [[{"a": 1}], None]
        assert got[1].error is not None and error_code(got[1].error) == 1142  # SELECT denied
        # A statement without a result set (an OK packet) reads as no rows.
        got = await reader.run(conn, ["DO 1", "SELECT 2 AS b"])
        assert [(r.rows, r.error) for r in got] == [([], None), ([{"b": 2}], None)]
        async with conn.cursor() as cursor:  # aiomysql itself still reads this connection in step
            await cursor.execute("SELECT 4")
            assert await cursor.fetchall() == ((4,),)
    finally:
        conn.close()


async def test_a_cancelled_read_closes_the_connection(mariadb_line: MariaDBSandbox) -> None:
    conn = await multi_statement_connection(mariadb_line)
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(MultiReader().run(conn, ["SELECT SLEEP(5)"]), timeout=0.3)
        # Its answer would arrive later, out of step with the next statement: never reused.
        assert conn.closed
    finally:
        conn.close()
