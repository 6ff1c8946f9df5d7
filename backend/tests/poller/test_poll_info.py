"""The target's info follows the server as the poller learns it changed: its copy of the server
and each source's skip reason, while what earlier polls handed out stays as it was."""

from __future__ import annotations

from poolscope.poller.collectors.thread_pool_stats import ThreadPoolStats

from .helpers import poller_for


async def test_skip_reasons_and_the_info_snapshots_follow_the_server_as_it_changes(monitor_dsn: str) -> None:
    poller = poller_for(monitor_dsn)
    try:
        first = (await poller.poll_once()).info
        second = (await poller.poll_once()).info
        server = poller.connection.server
        assert server is not None and first.server is not None
        # A copy of the server and connection as they are, not the connection's own objects
        # (it keeps changing them).
        assert second.server == first.server == server.model_copy() and second.server is not server
        assert second.connection == poller.connection.info and second.connection is not poller.connection.info

        # Changed in place, as learn_server changes it: the next poll's snapshot and skip reasons
        # show it, and the earlier snapshots stay as they were.
        server.edition = f"{server.edition} (changed)"
        server.pool_tables = [t for t in server.pool_tables if t != "THREAD_POOL_STATS"]
        third = (await poller.poll_once()).info
        assert third.server == server.model_copy()
        assert second.server.edition != server.edition
        stats = {c.name: c for c in third.collectors}["thread_pool_stats"]
        assert stats.skipped == ThreadPoolStats().applies(server) and stats.skipped is not None
        assert "THREAD_POOL_STATS" in second.server.pool_tables

        # Back as it was: the source runs again.
        server.pool_tables = [*server.pool_tables, "THREAD_POOL_STATS"]
        fourth = (await poller.poll_once()).info
        assert {c.name: c for c in fourth.collectors}["thread_pool_stats"].duration_ms is not None
    finally:
        await poller.close()
