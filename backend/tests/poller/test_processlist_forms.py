"""The processlist collector picks its statement by the server's size, and reads both forms alike."""

from __future__ import annotations

from poolscope.analysis.counters import CounterMemory
from poolscope.poller.collectors.base import ParseContext
from poolscope.poller.collectors.processlist import SHOW_MAX_CONNECTIONS, SHOW_SQL, Processlist
from poolscope.schemas import ServerInfo

SERVER = ServerInfo(
    flavor="mariadb", version="10.11.19-MariaDB", thread_handling="pool-of-threads", pool_enabled=True
)


def _ctx(connections: int | None) -> ParseContext:
    return ParseContext(now=0.0, server=SERVER, counters=CounterMemory(), connections=connections)


def test_first_read_is_safe_at_any_size_then_follows_the_connection_count():
    collector = Processlist()
    assert "information_schema.PROCESSLIST" in collector.sql(SERVER), "size unknown: the bounded form"
    collector.parse([], _ctx(None))
    assert collector.sql(SERVER) != SHOW_SQL
    collector.parse([], _ctx(SHOW_MAX_CONNECTIONS))
    assert collector.sql(SERVER) == SHOW_SQL
    collector.parse([], _ctx(SHOW_MAX_CONNECTIONS + 1))
    assert "WHERE COMMAND NOT IN" in collector.sql(SERVER)
    assert set(collector.statements(SERVER)) == {SHOW_SQL, collector.sql(SERVER)}


def test_show_rows_give_active_sessions_and_name_idle_ones():
    rows = [
        # SHOW FULL PROCESSLIST's columns, lower-cased as the connection hands them over.
        {
            "id": 7,
            "user": "app",
            "host": "10.0.0.5:4000",
            "db": "shop",
            "command": "Sleep",
            "time": 40,
            "state": "",
            "info": None,
            "progress": 0.0,
        },
        {
            "id": 8,
            "user": "app",
            "host": "10.0.0.5:4001",
            "db": "shop",
            "command": "Query",
            "time": 3,
            "state": "Sending data",
            "info": "SELECT " + "x" * 5000,
            "progress": 0.0,
        },
        {
            "id": 9,
            "user": "monitor",
            "host": "127.0.0.1:5000",
            "db": None,
            "command": "Query",
            "time": 0,
            "state": "init",
            "info": SHOW_SQL,
            "progress": 0.0,
        },
    ]
    section = Processlist().parse(rows, _ctx(3)).section
    assert [s.id for s in section.active] == [8], "idle sessions and our own poll are not activity"
    assert section.active[0].time_s == 3.0
    assert len(section.active[0].info) == 2048, "SHOW FULL sends whole statements: kept bounded"
    assert section.identities[7] == ("app", "10.0.0.5:4000", "shop"), "idle sessions are named too"
    assert set(section.identities) == {7, 8, 9}
