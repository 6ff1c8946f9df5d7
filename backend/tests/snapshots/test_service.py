"""The snapshot service on a real SQLite store: a capture when the server cannot be read still keeps the
moment and says why; a window still open when the backend stops is completed after a restart; SQL
literal redaction covers every place SQL appears."""

from __future__ import annotations

import asyncio
import contextlib
import time

from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings, TargetConfig
from poolscope.schemas import (
    Alert,
    Blocker,
    GroupHolders,
    Holder,
    PollEvent,
    QueuedConnection,
    Sample,
    Session,
)
from poolscope.snapshots.service import SnapshotService
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_dev.sandbox import free_port
from tests.alerts.states import group, info, state
from tests.stores import make_store, sqlite_url
from tests.waiting import await_for


async def make(tmp_path, **snapshots):
    url = sqlite_url(tmp_path)
    await asyncio.to_thread(upgrade_to_head, url)
    settings = Settings(
        poll_interval_s=0.2,
        store_url=url,
        targets=[
            TargetConfig(name="db1", dsn=f"mysql://u:secret-pw@127.0.0.1:{free_port()}/", connect_timeout_s=1)
        ],
        snapshots=snapshots,
    )
    store = make_store(url)
    return store, SnapshotService(settings, store, AlertRepository(store.engine))


async def write_polls(store: SqlStore, now: float, n: int = 5) -> None:
    for i in range(n):
        ts = now - (n - 1 - i) * 0.2
        st = state(
            ts,
            [group(0, queue_length=2)],
            queue=[
                QueuedConnection(
                    group_id=0,
                    position=0,
                    priority="low",
                    connection_id=5,
                    queueing_time_ms=9.0,
                    user="app",
                    host="h:1",
                    db="shop",
                    last_sql="SELECT * FROM t WHERE id = 42",
                )
            ],
            sessions=[Session(id=6, command="Query", info="UPDATE t SET name = 'bob' WHERE id = 7")],
            holders=[
                GroupHolders(
                    group_id=0,
                    stalled=True,
                    queue_length=2,
                    holders=[
                        Holder(
                            connection_id=6,
                            command="Query",
                            info="UPDATE t SET name = 'bob' WHERE id = 7",
                            waits_on="row lock",
                            blockers=[
                                Blocker(
                                    kind="row_lock", connection_id=3, statement="DELETE FROM t WHERE k = 'z'"
                                )
                            ],
                        )
                    ],
                )
            ],
        )
        await store.write_poll(
            info(ts), st, [Sample(metric="tp_group_queue_length", labels={"group": "0"}, value=2.0)], ts
        )


async def test_unreadable_server_still_keeps_the_moment_and_says_why(tmp_path):
    store, service = await make(tmp_path, window_before_s=10, window_after_s=0.1, redact_sql_literals=True)
    try:
        await write_polls(store, time.time())
        snapshot_id = await service.capture("db1", "manual")
        doc = await service.document(snapshot_id)
        assert "connection" in doc.server_tables.errors
        assert "secret-pw" not in (await service.document_text(snapshot_id))
        assert doc.state.queue[0].user == "app"
        # Redaction: the queue's last SQL and the session's SQL lose their literals.
        assert doc.state.queue[0].last_sql == "SELECT * FROM t WHERE id = ?"
        assert doc.state.sessions[0].info == "UPDATE t SET name = ? WHERE id = ?"
        # The stalled group's holders at the moment, their statements and their blockers' too.
        (held,) = doc.holders
        assert held.group_id == 0 and held.holders[0].info == "UPDATE t SET name = ? WHERE id = ?"
        assert held.holders[0].blockers[0].statement == "DELETE FROM t WHERE k = ?"
        assert doc.state.holders[0].holders[0].info == "UPDATE t SET name = ? WHERE id = ?"
        assert doc.flight_recorder == []  # no running poller took it
        assert doc.redacted_sql
        assert doc.series and doc.series[0].points
    finally:
        await service.stop()
        await store.close()


async def test_a_collecting_snapshot_is_completed_after_a_restart(tmp_path):
    store, service = await make(tmp_path, window_before_s=10, window_after_s=2)
    await write_polls(store, time.time())
    snapshot_id = await service.capture("db1", "manual")
    await service.stop()  # the backend stops before the window closes
    assert (await service.list())[0].status == "collecting"
    await write_polls(store, time.time() + 1.5, n=3)  # polls 1.1-1.5 s after the moment, by the next run
    _, restarted = store, SnapshotService(service.settings, store, service.alert_repo)
    try:
        await restarted.start()
        await await_for(
            restarted.list,
            10,
            "the snapshot was never completed",
            until=lambda got: got[0].status == "complete",
        )
        doc = await restarted.document(snapshot_id)
        assert doc.window.complete
        # Points are 1 s bucket starts aligned on the window start (10 s before the moment).
        assert max(p[0] for p in doc.series[0].points) >= doc.moment_ts + 0.99
    finally:
        await restarted.stop()
        await store.close()


async def test_retention_by_total_size_keeps_the_newest(tmp_path):
    store, service = await make(tmp_path, window_before_s=5, window_after_s=0, capture_timeout_s=1)
    try:
        await write_polls(store, time.time())
        first = await service.capture("db1", "manual")
        size = (await service.list())[0].size_bytes
        # Room for two snapshots of this size, not three.
        service.config = service.config.model_copy(update={"max_total_mb": 2.5 * size / 1024 / 1024})
        second = await service.capture("db1", "manual")
        third = await service.capture("db1", "manual")
        assert [s.id for s in await service.list()] == [third, second]
        assert first not in {s.id for s in await service.list()}
    finally:
        await service.stop()
        await store.close()


def stall_alert(group: str, poll_ts: float, alert_id: int) -> Alert:
    return Alert(
        id=alert_id,
        fingerprint=f"db1/group_stalled/{group}",
        target="db1",
        rule="group_stalled",
        group=group,
        severity="critical",
        status="firing",
        summary=f"db1: thread group {group} stalled",
        description="",
        started_at=poll_ts,
        fired_at=poll_ts,
        last_active_at=poll_ts,
        poll_ts=poll_ts,
    )


@contextlib.asynccontextmanager
async def cooldown_service(tmp_path):
    """A service with a 600 s cooldown and a 5 s window after the moment, stopped afterwards."""
    store, service = await make(
        tmp_path, window_before_s=10, window_after_s=5, auto_cooldown_s=600, capture_timeout_s=1
    )
    try:
        yield store, service
    finally:
        await service.stop()
        await store.close()


async def test_stall_alerts_inside_the_cooldown_link_the_snapshot_whose_window_covers_them(tmp_path):
    # Both groups of one stall fire together: one capture, and both alerts link it (before, the
    # second got none, and its operator no snapshot). An alert past the window gets none, and
    # none is captured for it inside the cooldown.
    async with cooldown_service(tmp_path) as (store, service):
        now = time.time()
        await write_polls(store, now)
        first, second = await asyncio.gather(
            service.on_alert_firing(stall_alert("0", now, 1)),
            service.on_alert_firing(stall_alert("1", now, 2)),
        )
        assert first is not None and second == first
        assert [s.id for s in await service.list()] == [first]
        again = await service.on_alert_firing(stall_alert("0", now + 4, 3))
        assert again == first
        assert await service.on_alert_firing(stall_alert("1", now + 60, 4)) is None
        assert [s.id for s in await service.list()] == [first]


async def test_a_failed_automatic_capture_links_nothing_and_the_next_stall_alert_captures(tmp_path):
    async with cooldown_service(tmp_path) as (store, service):
        now = time.time()  # no poll stored: the capture fails ("no state yet")
        results = await asyncio.wait_for(
            asyncio.gather(
                service.on_alert_firing(stall_alert("0", now, 1)),
                service.on_alert_firing(stall_alert("1", now, 2)),
            ),
            10,
        )
        assert results == [None, None]
        assert await service.list() == []
        # Inside the cooldown, but nothing was captured: the next stall alert captures.
        await write_polls(store, now + 1)
        taken = await service.on_alert_firing(stall_alert("0", now + 1, 3))
        assert taken is not None and [s.id for s in await service.list()] == [taken]


async def test_a_cancelled_capture_answers_the_alerts_waiting_for_it(tmp_path):
    async with cooldown_service(tmp_path) as (store, service):
        now = time.time()
        await write_polls(store, now)
        first = asyncio.create_task(service.on_alert_firing(stall_alert("0", now, 1)))
        await asyncio.sleep(0)  # the first is capturing (its reads are awaits on the store)
        second = asyncio.create_task(service.on_alert_firing(stall_alert("1", now, 2)))
        await asyncio.sleep(0)  # the second waits for the first's capture
        assert not first.done() and not second.done()
        first.cancel()
        assert await asyncio.wait_for(second, 10) is None
        assert first.cancelled()


async def test_a_deleted_snapshot_is_not_linked(tmp_path):
    async with cooldown_service(tmp_path) as (store, service):
        now = time.time()
        await write_polls(store, now)
        taken = await service.on_alert_firing(stall_alert("0", now, 1))
        assert taken is not None and await service.on_alert_firing(stall_alert("1", now, 2)) == taken
        assert await service.delete(taken)
        assert await service.on_alert_firing(stall_alert("1", now + 1, 3)) is None


async def test_an_alerts_snapshot_starts_from_the_poll_that_fired_not_the_store(tmp_path):
    # The engine judges a poll before the store has it: the firing poll's stalled group must be in
    # the snapshot even when the store's latest poll is an older, calm one.
    async with cooldown_service(tmp_path) as (store, service):
        now = time.time()
        await write_polls(store, now - 1)
        firing = state(now, [group(0, queue_length=7, is_stalled=True)])
        poll = PollEvent(target="db1", ts=now, target_info=info(now), state=firing, samples=[])
        taken = await service.on_alert_firing(stall_alert("0", now, 1), poll)
        assert taken is not None
        doc = await service.document(taken)
        assert [(g.group_id, g.is_stalled, g.queue_length) for g in doc.state.groups] == [(0, True, 7)]
