"""An alert's automatic snapshot carries the minute before it, against the real MariaDB: the poller
polls the sandbox on a test clock (one second a poll, without waiting for it), a stall of CPU-bound
statements fires group_stalled, and the snapshot's flight recorder and holders name them."""

from __future__ import annotations

import asyncio

import pytest

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings, TargetConfig
from poolscope.poller.target_poller import TargetPoller
from poolscope.schemas import PollEvent
from poolscope.snapshots.report import render_report
from poolscope.snapshots.service import SnapshotService
from poolscope.store.live import LiveHub
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from tests.clock import FakeClock
from tests.poller.helpers import calibrate_benchmark, connections_in_group, global_variables, running

HEAVY_SHAPE = "SELECT BENCHMARK(?, MD5(?))"


@pytest.mark.slow
async def test_an_alerts_snapshot_starts_a_minute_before_it_and_names_the_holders(
    mariadb, monitor_dsn, tmp_path
):
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    settings = Settings(
        poll_interval_s=1.0,
        store_url=url,
        targets=[TargetConfig(name="t", dsn=monitor_dsn)],
        snapshots={"window_before_s": 90, "window_after_s": 1, "capture_timeout_s": 5},
    )
    clock = FakeClock()
    poller = TargetPoller(settings.targets[0], settings, clock=clock)
    store = SqlStore(url, raw_retention_s=3600, rollup_retention_s=86400)
    repo = AlertRepository(store.engine)
    service = SnapshotService(settings, store, repo, {"t": poller})
    engine = AlertEngine(settings.alerts, LiveHub(), repo, snapshots=service, clock=clock)

    async def poll() -> PollEvent:
        result = await poller.poll_once()
        event = PollEvent(
            target="t",
            ts=result.info.last_poll_at or 0.0,
            target_info=result.info,
            state=result.state,
            samples=[],
        )
        await engine.evaluate(event)
        await clock.advance(1.0)
        return event

    try:
        # 70 seconds of an idle pool on the test clock.
        for _ in range(70):
            await poll()
        loops = calibrate_benchmark(mariadb, 2.0)
        with global_variables(mariadb, thread_pool_stall_limit=300):
            holders = connections_in_group(mariadb, group=1, size=2, count=3)
            waiters = connections_in_group(mariadb, group=1, size=2, count=4)
            holder_ids = {c.thread_id() for c in holders}
            heavy = f"SELECT BENCHMARK({loops}, MD5('x'))"
            with (
                running(holders, [heavy] * 3, repeat=60, sandbox=mariadb),
                running(waiters, ["SELECT 1 + 1"] * 4, repeat=100_000, sandbox=mariadb),
            ):
                fired = None
                for _ in range(120):  # bounded: a stall shows within seconds
                    await poll()
                    await asyncio.sleep(0.3)  # real time for the server's stall limit to pass
                    fired = next((a for a in engine.current() if a.rule == "group_stalled"), None)
                    if fired is not None and fired.status == "firing":
                        break
                assert fired is not None and fired.status == "firing", "no group_stalled alert fired"
                for _ in range(100):  # the capture runs beside the polls (bounded)
                    if engine.current()[0].snapshot_id is not None or await service.list():
                        break
                    await asyncio.sleep(0.1)
    finally:
        await engine.stop()
        await poller.close()
    try:
        (summary,) = await service.list()
        doc = await service.document(summary.id)
    finally:
        await service.stop()
        await store.close()

    # The alert names the statement holding the group, and its connection, as text and annotations.
    assert fired.poll_ts is not None
    assert HEAVY_SHAPE in fired.description
    assert int(fired.annotations["top_holder_connection"]) in holder_ids
    assert fired.annotations["top_holder_digest"] and HEAVY_SHAPE in fired.annotations["top_holder"]

    # The flight recorder: one entry a second, from at least 60 s before the alert's poll.
    recorded = doc.flight_recorder
    assert recorded[0].ts <= fired.poll_ts - 60, (recorded[0].ts, fired.poll_ts)
    assert recorded[-1].ts >= fired.poll_ts
    gaps = {round(b.ts - a.ts) for a, b in zip(recorded[:-1], recorded[1:], strict=True)}
    assert gaps == {1}, gaps
    # Idle seconds before the stall, then group 1's holders: the CPU-bound statements, not the waiters.
    assert not recorded[0].groups
    at_alert = next(e for e in recorded if e.ts == fired.poll_ts)
    (group,) = [g for g in at_alert.groups if g.group == 1]
    assert group.stalled and group.holders[0].connection_id in holder_ids  # longest running first
    assert {h.statement for h in group.holders if h.connection_id in holder_ids} == {HEAVY_SHAPE}
    assert all(h.connection_id in holder_ids for h in group.holders if h.statement == HEAVY_SHAPE)

    # The offline report: the incident's top digest is the holding statement.
    top = render_report(doc).split('data-testid="report-top-digests"')[1].split("</tr>")[1]
    assert HEAVY_SHAPE in top

    # The moment: the stalled group's holders.
    stalled = [g for g in doc.holders if g.group_id == 1]
    assert stalled and stalled[0].stalled
    assert {h.digest_text for h in stalled[0].holders if h.connection_id in holder_ids} == {HEAVY_SHAPE}
