"""SHOW FULL PROCESSLIST read undecoded (wire.RawRows) gives what its decoded rows give, on a live server.

The poll decodes only the active sessions' rows of SHOW FULL PROCESSLIST, and names idle ones
from the listing only when asked (processlist.SessionListing): the section must be the one the
decoded rows make, idle sessions and sessions in a transaction included.
"""

from __future__ import annotations

from poolscope.poller.collectors.processlist import SHOW_SQL, Processlist, SessionListing
from poolscope.poller.wire import MultiReader
from poolscope_dev.sandbox import SBTEST_USER, MariaDBSandbox

from .helpers import multi_statement_connection, parse_context

# Sessions' clocks and states move between two reads: the same read is compared, both ways.
CYCLE = 2


async def test_raw_rows_decode_to_the_rows_of_the_decoded_read(mariadb: MariaDBSandbox) -> None:
    conn = await multi_statement_connection(mariadb)
    try:
        reader = MultiReader()
        sql = ["SELECT NULL AS n, 7 AS i, 'é' AS s, CAST(1.5 AS DECIMAL(4,2)) AS d", "SELECT 2 AS b"]
        for _ in range(CYCLE):  # the second read reuses the remembered result shapes
            decoded = await reader.run(conn, sql)
            raw_first = await reader.run(conn, sql, [True, False])
            raw = raw_first[0].raw
            assert raw is not None and raw_first[0].rows is None
            assert raw.rows() == decoded[0].rows
            assert raw_first[1].raw is None and raw_first[1].rows == decoded[1].rows, "only flagged ones"
            (packet,) = raw.packets
            assert [raw.value(packet, i) for i in range(len(raw.names))] == list(decoded[0].rows[0].values())
            assert raw.raw(packet, 0, 2, 3) == [None, "é".encode(), b"1.50"]
            assert raw.raw(packet, 1, 9) == [b"7", None], "past the row's last column: None"
    finally:
        conn.close()


async def test_parse_raw_gives_the_section_parse_gives(mariadb: MariaDBSandbox) -> None:
    idle = mariadb.connect(SBTEST_USER, database="sbtest")
    in_trx = mariadb.connect(SBTEST_USER, database="sbtest")
    conn = await multi_statement_connection(mariadb)
    try:
        with in_trx.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS raw_probe (id INT PRIMARY KEY, v INT)")
            cur.execute("REPLACE INTO raw_probe VALUES (1, 0)")
            cur.execute("BEGIN")
            cur.execute("UPDATE raw_probe SET v = v + 1 WHERE id = 1")  # idle in a transaction
        (result,) = await MultiReader().run(conn, [SHOW_SQL], [True])
        raw = result.raw
        assert raw is not None and len(raw) >= 3
        collectors = {"raw": Processlist(), "rows": Processlist()}
        for collector in collectors.values():
            collector.parse([], parse_context(5))  # the next read is SHOW's
            assert collector.reads_raw()
        fast = collectors["raw"].parse_raw(raw, parse_context(5))
        slow = collectors["rows"].parse(raw.rows(), parse_context(5))
        assert fast.section.active == slow.section.active
        assert fast.section.by_id == slow.section.by_id
        assert [s.model_dump() for s in fast.samples] == [s.model_dump() for s in slow.samples]
        assert fast.section.complete and slow.section.complete, "SHOW lists every session"
        assert isinstance(fast.section.identities, SessionListing)
        assert dict(fast.section.identities) == dict(slow.section.identities)
        for session in (idle, in_trx):
            who = fast.section.identities.get(session.thread_id())
            assert who is not None and (who.user, who.db) == (SBTEST_USER, "sbtest") and who.host
        assert 0 not in fast.section.identities and fast.section.identities.get(0) is None
        assert collectors["raw"].use_show == collectors["rows"].use_show
    finally:
        conn.close()
        idle.close()
        in_trx.close()
