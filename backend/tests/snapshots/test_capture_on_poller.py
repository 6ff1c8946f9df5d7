"""A snapshot reads the server's tables on the poller's own extra_port connection, between polls."""

from __future__ import annotations

import asyncio

from poolscope.snapshots.capture import capture_server_tables
from tests.poller.helpers import poller_for


async def test_raw_tables_are_read_on_the_pollers_connection_between_polls(mariadb, monitor_dsn):
    poller = poller_for(monitor_dsn)
    await poller.poll_once()
    poller_thread = poller.connection.conn.server_thread_id[0]
    # A capture and polls at once: they take turns on the one connection, none fails.
    polls = asyncio.gather(*(poller.poll_once() for _ in range(3)))
    tables = await capture_server_tables(poller.config, 10.0, poller)
    results = await polls
    await poller.close()
    assert tables.errors == {}
    assert tables.port_kind == "extra_port"
    # The PROCESSLIST it read shows the reading session itself: the poller's connection.
    readers = [r for r in tables.processlist if "information_schema.PROCESSLIST" in (r.get("info") or "")]
    assert [r["id"] for r in readers] == [poller_thread]
    assert len(tables.thread_pool_groups) == 2 and tables.global_variables["thread_pool_size"] == "2"
    assert all(r.info.status == "up" for r in results)


async def test_without_a_connected_poller_a_connection_of_its_own_is_used(mariadb, monitor_dsn):
    poller = poller_for(monitor_dsn)  # never polled: not connected
    tables = await capture_server_tables(poller.config, 10.0, poller)
    assert tables.errors == {} and tables.port_kind == "extra_port"
    assert len(tables.thread_pool_groups) == 2
