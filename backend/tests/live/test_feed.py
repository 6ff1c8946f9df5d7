"""The store carries the live channel between processes: a second store (an API process) reads the
latest rows another store wrote and gets its polls and alert changes as SSE frames, in order, by a
short poll on SQLite and by LISTEN/NOTIFY on PostgreSQL. The feed's looks by sequence (SQLite's
short poll, PostgreSQL's safety poll) come when the test clock (tests/clock.py) says."""

from __future__ import annotations

import asyncio
import json
import time

from sqlalchemy import event, text

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.settings import AlertSettings
from poolscope.schemas import Sample
from poolscope.store.feed import LISTEN_APPLICATION, AlertEventLog, LiveFeed
from poolscope.store.live import encode
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from tests.alerts.states import calm, info, stalled, state
from tests.clock import FakeClock
from tests.stores import make_store, new_database
from tests.waiting import await_for

T0 = 1_800_000_000.0


def sample(value: float) -> Sample:
    return Sample(metric="tp_group_queue_length", labels={"group": "0"}, value=value)


async def write(store: SqlStore, name: str, ts: float, up: bool = True) -> None:
    target_info = info(ts, "up" if up else "down").model_copy(update={"name": name})
    target_state = state(ts, target=name) if up else None
    await store.write_poll(target_info, target_state, [sample(ts - T0)], ts)


async def following(feed: LiveFeed, looks: int = 1) -> None:
    """Until the feed has looked at the store `looks` times since it started (its first look comes
    once a client is connected, and on PostgreSQL once LISTEN is on)."""
    await await_for(lambda: feed.looks, 10, "the feed never looked at the store", until=lambda n: n >= looks)


async def alert_changes_logged(store: SqlStore) -> None:
    """Until the writer's AlertEventLog has stored an alert change (it writes in a task of its own)."""

    async def logged() -> int:
        async with store.engine.connect() as conn:
            return len(await store.latest_rows.alert_events_since(conn, 0))

    await await_for(logged, 10, "no alert change was logged")


async def frames_until(queue: asyncio.Queue, count: int, timeout_s: float = 10.0) -> list:
    out = []
    deadline = time.monotonic() + timeout_s
    while len(out) < count:
        out.append(await asyncio.wait_for(queue.get(), timeout=max(0.01, deadline - time.monotonic())))
    return out


async def test_another_store_reads_the_latest_rows(store_url):
    writer, reader = make_store(store_url), make_store(store_url)
    try:
        assert await reader.latest("db1") is None
        await write(writer, "db1", T0)
        await write(writer, "db1", T0 + 1)
        await write(writer, "db2", T0 + 1)
        await write(writer, "db1", T0 + 2, up=False)
        target_info, target_state = await reader.latest("db1")
        assert target_info.status == "down" and target_info.last_poll_at == T0 + 2
        assert target_state is not None and target_state.ts == T0 + 1  # the last good state
        assert await reader.latest_samples("db1") == [sample(2.0)]
        assert (await reader.latest("db2"))[1].ts == T0 + 1
        # Written again later: the reader keeps no stale copy.
        await write(writer, "db1", T0 + 3)
        assert (await reader.latest("db1"))[1].ts == T0 + 3
        infos = await reader.latest_rows.infos(["db1", "db2", "nope"])
        assert set(infos) == {"db1", "db2"} and infos["db1"].last_poll_at == T0 + 3
    finally:
        await writer.close()
        await reader.close()


async def test_polls_and_alert_changes_reach_another_process_clients_in_order(store_url):
    clock = FakeClock()
    writer, reader = make_store(store_url), make_store(store_url)
    feed = LiveFeed(reader.latest_rows, reader.hub, store_url, poll_s=0.05, safety_poll_s=30, clock=clock)
    engine = AlertEngine(AlertSettings(), writer.hub, AlertRepository(writer.engine))
    alert_log = AlertEventLog(writer.hub, writer.latest_rows)
    await feed.start()
    await alert_log.start()
    client = reader.hub.open_client(limit=10)
    assert client is not None
    try:
        await following(feed)
        frames = []
        for i in range(6):
            for name in ("db1", "db2"):
                await write(writer, name, T0 + i)
            # A row holds only the newest poll: the pollers' 1 s is far slower than the tail.
            await clock.advance(feed.poll_s)  # SQLite: the next look (PostgreSQL: NOTIFY)
            frames += await frames_until(client.queue, 2)
        assert all(f.kind == "poll" for f in frames)
        got = [(f.target, json.loads(f.data.split(b"data: ", 1)[1])["ts"]) for f in frames]
        for name in ("db1", "db2"):  # each target's polls arrive in order, none twice
            mine = [ts for t, ts in got if t == name]
            assert mine == sorted(mine) and len(set(mine)) == len(mine) and mine[-1] == T0 + 5
        # A frame from the store says what the in-process frame says.
        last = await writer.latest("db2")
        in_process = encode(calm(T0 + 5).model_copy(update={"target": "db2"}))
        last_frame = next(f for f in reversed(frames) if f.target == "db2")
        from_store = json.loads(last_frame.data.split(b"data: ", 1)[1])
        assert from_store["target_info"] == json.loads(last[0].model_dump_json())
        assert from_store["state"] == json.loads(last[1].model_dump_json())
        assert from_store["samples"] == [json.loads(sample(5.0).model_dump_json())]
        assert set(from_store) == set(json.loads(in_process.data.split(b"data: ", 1)[1]))
        # The writer's alert engine fires; the change log carries it across.
        await engine.evaluate(stalled(T0 + 10))
        await alert_changes_logged(writer)
        await clock.advance(feed.poll_s)  # SQLite: the next look (PostgreSQL: NOTIFY)
        alert_frames = [f for f in await frames_until(client.queue, 1) if f.kind == "alert"]
        assert alert_frames and alert_frames[0].data.startswith(b"event: alert\ndata: {")
        change = json.loads(alert_frames[0].data.split(b"data: ", 1)[1])
        assert change["target"] == "db1" and change["transition"] in ("pending", "firing")
    finally:
        client.close()
        await alert_log.stop()
        await feed.stop()
        await writer.close()
        await reader.close()


async def test_the_feed_reads_nothing_while_no_client_is_connected(store_url):
    writer, reader = make_store(store_url), make_store(store_url)
    statements: list[str] = []
    event.listen(reader.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    clock = FakeClock()
    feed = LiveFeed(reader.latest_rows, reader.hub, store_url, poll_s=0.05, safety_poll_s=0.1, clock=clock)
    await feed.start()
    try:
        for i in range(10):
            await write(writer, "db1", T0 + i)
            await clock.advance(0.05)  # the feed's short poll and safety poll would have come
        assert statements == [] and feed.looks == 0
        client = reader.hub.open_client(limit=1)
        await write(writer, "db1", T0 + 20)  # may or may not be seen: it raced the feed's start
        await following(feed)
        await write(writer, "db1", T0 + 21)
        await clock.advance(feed.safety_poll_s)
        frames = await frames_until(client.queue, 1)
        assert statements and frames[-1].target == "db1"
        client.close()
    finally:
        await feed.stop()
        await writer.close()
        await reader.close()


async def test_the_feed_reads_only_the_polls_its_clients_want(store_url):
    """The UI keeps an alerts-only stream open on every page: the latest rows are not read for it,
    and a client of one target gets every poll of that target, in order, and no other."""
    writer, reader = make_store(store_url), make_store(store_url)
    statements: list[str] = []
    event.listen(reader.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    clock = FakeClock()
    feed = LiveFeed(reader.latest_rows, reader.hub, store_url, poll_s=0.05, safety_poll_s=0.1, clock=clock)
    engine = AlertEngine(AlertSettings(), writer.hub, AlertRepository(writer.engine))
    alert_log = AlertEventLog(writer.hub, writer.latest_rows)
    await feed.start()
    await alert_log.start()
    alerts = reader.hub.open_client(limit=10, kinds=frozenset({"alert"}))
    assert alerts is not None
    db2 = None
    try:
        await following(feed)
        for i in range(5):
            await write(writer, "db1", T0 + i)
            await write(writer, "db2", T0 + i)
            looks = feed.looks
            await clock.advance(feed.safety_poll_s)
            await following(feed, looks + 1)
        await engine.evaluate(stalled(T0 + 10))
        await alert_changes_logged(writer)
        await clock.advance(feed.safety_poll_s)  # SQLite: the next look (PostgreSQL: NOTIFY)
        change = await frames_until(alerts.queue, 1)
        assert [f.kind for f in change] == ["alert"] and change[0].target == "db1"
        reads_of_rows = [s for s in statements if "target_latest.info" in s]
        assert statements and reads_of_rows == []  # the feed ran, and read no latest row
        db2 = reader.hub.open_client(limit=10, kinds=frozenset({"poll"}), target="db2")
        assert db2 is not None
        looks = feed.looks
        await clock.advance(feed.safety_poll_s)
        await following(feed, looks + 1)  # the next look knows db2 is wanted
        for i in range(10, 16):
            await write(writer, "db1", T0 + i)
            await write(writer, "db2", T0 + i)
            await clock.advance(feed.safety_poll_s)
        # A latest row holds a target's newest poll only, so a look may see two polls as one:
        # what is promised is db2's, in order, none twice, none from before it joined, the last.
        got: list[tuple[str, str, float]] = []
        for _ in range(6):  # at most one frame a poll written
            got += [_kind_target_ts(f) for f in await frames_until(db2.queue, 1)]
            if got[-1][2] >= T0 + 15:
                break
        assert {(kind, target) for kind, target, _ in got} == {("poll", "db2")}
        assert [ts for *_, ts in got] == sorted(set(ts for *_, ts in got)) and got[0][2] >= T0 + 10
        assert alerts.queue.empty()  # no poll reached the alerts-only stream
        assert [s for s in statements if "target_latest.info" in s]  # db2's rows were read
    finally:
        alerts.close()
        if db2 is not None:
            db2.close()
        await alert_log.stop()
        await feed.stop()
        await writer.close()
        await reader.close()


def _kind_target_ts(frame) -> tuple[str, str, float]:
    return frame.kind, frame.target, json.loads(frame.data.split(b"data: ", 1)[1])["ts"]


async def test_a_client_joining_during_a_look_gets_what_commits_after_it_joined(tmp_path):
    """A browser opens a target's page while the feed is reading, and the target is polled then:
    that poll reaches it at the next look, not one poll later (the wants are taken after the mark)."""
    sqlite_url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    await asyncio.to_thread(upgrade_to_head, sqlite_url)
    writer, reader = make_store(sqlite_url), make_store(sqlite_url)
    feed = LiveFeed(reader.latest_rows, reader.hub, sqlite_url)
    alerts = reader.hub.open_client(limit=10, kinds=frozenset({"alert"}))
    joined = []
    real_latest_seq = reader.latest_rows.latest_seq

    async def a_client_joins_meanwhile(conn):
        if not joined:
            joined.append(reader.hub.open_client(limit=10, kinds=frozenset({"poll"}), target="db2"))
            await write(writer, "db2", T0 + 1)
        return await real_latest_seq(conn)

    try:
        await write(writer, "db2", T0)
        async with reader.engine.connect() as conn:
            feed._reset(*await reader.latest_rows.high_water(conn))
        reader.latest_rows.latest_seq = a_client_joins_meanwhile  # type: ignore[method-assign]
        await feed.catch_up()
        await feed.catch_up()
        assert [_kind_target_ts(f) for f in await frames_until(joined[0].queue, 1)] == [
            ("poll", "db2", T0 + 1)
        ]
    finally:
        alerts.close()
        for client in joined:
            client.close()
        await writer.close()
        await reader.close()


async def test_a_lost_listen_connection_is_reopened(request, tmp_path):
    url = new_database(request, "postgresql", tmp_path)
    await asyncio.to_thread(upgrade_to_head, url)
    writer, reader = make_store(url), make_store(url)
    # No safety poll within the test (its clock stands still): only NOTIFY and the catch-up after
    # a reconnect deliver.
    feed = LiveFeed(reader.latest_rows, reader.hub, url, poll_s=0.05, safety_poll_s=600, clock=FakeClock())
    await feed.start()
    client = reader.hub.open_client(limit=1)
    try:
        await following(feed)
        await write(writer, "db1", T0)
        assert (await frames_until(client.queue, 1))[0].target == "db1"
        async with writer.engine.begin() as conn:
            killed = (
                await conn.execute(
                    text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = :a"
                    ),
                    {"a": LISTEN_APPLICATION},
                )
            ).scalar()
        assert killed == 1
        await await_for(lambda: feed.reconnects, 10, "the feed never reconnected")
        await following(feed, 2)  # its catch-up on the new connection, LISTEN on
        assert feed.reconnects == 1
        await write(writer, "db1", T0 + 1)
        frame = (await frames_until(client.queue, 1, timeout_s=5))[0]
        assert json.loads(frame.data.split(b"data: ", 1)[1])["ts"] == T0 + 1
    finally:
        client.close()
        await feed.stop()
        await writer.close()
        await reader.close()
