"""The services module on a real SQLite store: everything is wired at construction (the snapshot
service reads through the scheduler's own pollers, the engine holds the snapshot service and not the
other way round), a stall alert's snapshot is linked by the engine, and stopping ends every task."""

from __future__ import annotations

import asyncio
import gc
import time

from poolscope.alerts.engine import AlertEngine
from poolscope.auth import AuthService
from poolscope.config import Settings, TargetConfig
from poolscope.services import POLLER_GC_THRESHOLD, run_services
from poolscope_dev.sandbox import free_port
from tests.alerts.states import stalled
from tests.snapshots.test_service import write_polls
from tests.waiting import await_for


def settings_for(tmp_path, **values) -> Settings:
    return Settings(
        poll_interval_s=0.2,
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        targets=[TargetConfig(name="db1", dsn=f"mysql://u:pw@127.0.0.1:{free_port()}/", connect_timeout_s=1)],
        snapshots={"window_before_s": 5, "window_after_s": 0, "capture_timeout_s": 1},
        **values,
    )


def refers_to_engine(obj: object) -> bool:
    return any(
        isinstance(v, AlertEngine) or isinstance(getattr(v, "__self__", None), AlertEngine)
        for v in vars(obj).values()
    )


async def test_a_stall_alerts_snapshot_is_linked_by_the_engine_and_nothing_points_back(tmp_path):
    settings = settings_for(tmp_path)
    async with run_services(settings, AuthService(settings), start_poller=False) as services:
        engine = services.alerts
        assert engine is not None and engine.snapshots is services.snapshots
        assert dict(services.snapshots.pollers) == {p.name: p for p in services.scheduler.pollers}
        assert not refers_to_engine(services.snapshots)

        now = time.time()
        await write_polls(services.store, now)
        await engine.evaluate(stalled(now))
        linked = await await_for(
            lambda: next((a for a in engine.current() if a.snapshot_id is not None), None),
            5,
            lambda _: f"no alert linked to a snapshot: {engine.current()}",
        )
        doc = await services.snapshots.document(linked.snapshot_id)
        assert (doc.trigger, doc.alert_id, doc.target) == ("alert", linked.id, "db1")
        (stored,) = await engine.repo.history()
        assert stored.snapshot_id == linked.snapshot_id
    left = [t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not [n for n in left if n.startswith(("alert-engine", "snapshot:", "poll:", "recommender"))], left


async def test_with_alerting_off_there_is_no_engine_and_snapshots_still_run(tmp_path):
    settings = settings_for(tmp_path, alerts={"enabled": False})
    async with run_services(settings, AuthService(settings), start_poller=False) as services:
        assert services.alerts is None and services.alertmanager is None
        await write_polls(services.store, time.time())
        snapshot_id = await services.snapshots.capture("db1", "manual")
        assert (await services.snapshots.document(snapshot_id)).trigger == "manual"


async def test_a_poller_process_collects_young_objects_less_often_and_role_all_is_left_alone(tmp_path):
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    settings = settings_for(tmp_path)
    try:
        async with run_services(settings, AuthService(settings), start_poller=False):
            assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
        gc.unfreeze()
        async with run_services(settings, None, start_poller=False, role="poller"):
            assert gc.get_threshold() == POLLER_GC_THRESHOLD
            assert gc.get_freeze_count() > 0  # what start-up built is out of the collections
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
