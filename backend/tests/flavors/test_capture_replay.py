"""capture writes a live server's output as a fixture; replaying it drives the real poller the same way."""

from __future__ import annotations

import json

from poolscope_dev.capture import capture
from poolscope_dev.loadgen import run_load
from tests.poller.helpers import poller_for
from tests.waiting import await_for


async def test_a_capture_of_a_queued_live_server_replays_with_its_queue_named(
    mariadb, monitor_dsn, sbtest_dsn, tmp_path
):
    import asyncio

    load = asyncio.create_task(run_load(sbtest_dsn, mode="waves", duration_s=6, connections=32))
    failed: list[str] = []

    # Capture until a queued request of an open connection is caught (the waves load queues the
    # pool); logins queue too, with CONNECTION_ID NULL, and have nobody to name.
    async def queued_rows() -> list[dict]:
        nonlocal failed
        failed = await capture(monitor_dsn, tmp_path)
        return json.loads((tmp_path / "thread_pool_queues.json").read_text())["rows"]

    try:
        queued = await await_for(
            queued_rows,
            10,  # the load's 6 s and its start
            "no capture caught a queued request of an open connection",
            0.2,
            lambda rows: any(row["CONNECTION_ID"] is not None for row in rows),
        )
    finally:
        await load
    assert failed == []
    # Rows are stored in the server's column names.
    groups = json.loads((tmp_path / "thread_pool_groups.json").read_text())["rows"]
    assert [row["GROUP_ID"] for row in groups] == [0, 1]
    assert queued, "the waves load never queued a request while capturing"

    poller = poller_for(f"fixture://{tmp_path}")
    result = await poller.poll_once()
    await poller.close()
    assert result.info.status == "up", result.info.reason
    assert [c.name for c in result.state.collectors if c.error] == []
    assert [g.group_id for g in result.state.groups] == [0, 1]
    assert result.state.queued_connections == len(queued)
    # Waiters are named from the captured PROCESSLIST, as the live poller names them.
    named = [q for q in result.state.queue if q.connection_id is not None]
    assert named and all(q.user == "sbtest" for q in named)
