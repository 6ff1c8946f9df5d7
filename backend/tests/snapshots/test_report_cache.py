"""Rendered reports are cached per snapshot and content version, on a real store and real worker
processes: a second request renders nothing, concurrent requests share one job, a completed window
or a deletion or eviction replaces or drops the entry, and the cache keeps within its budget."""

from __future__ import annotations

import asyncio
import time

from poolscope.snapshots.cache import ReportCache
from poolscope.snapshots.report import ReportView
from tests.snapshots.test_service import make, write_polls
from tests.waiting import await_for


async def test_a_report_is_rendered_once_and_replaced_when_its_window_completes(tmp_path):
    store, service = await make(tmp_path, window_before_s=5, window_after_s=6, capture_timeout_s=1)
    try:
        await write_polls(store, time.time())
        snapshot_id = await service.capture("db1", "manual")
        reports = await asyncio.gather(*(service.report_html(snapshot_id) for _ in range(3)))
        assert service.workers.jobs_started == 1  # three requests, one rendering
        assert len(set(reports)) == 1 and "window still open" in reports[0]
        assert await service.report_html(snapshot_id) == reports[0]
        assert service.workers.jobs_started == 1 and service.reports.hits == 1
        # The window closes 6 s after the moment, then the snapshot completes.
        await await_for(
            service.list,
            30,
            "the snapshot was never completed",
            until=lambda got: got[0].status == "complete",
        )
        completed = await service.report_html(snapshot_id)
        assert "window still open" not in completed and service.workers.jobs_started == 2
        name, _ = await service.archive(snapshot_id)  # the archive takes its report from the cache
        assert name.endswith(f"-{snapshot_id}") and service.reports.hits == 2
        # Another reader's zone and theme is its own rendering (one job more than the archive's), kept beside the first.
        cet = await service.report_html(snapshot_id, ReportView(60, "CET", "dark"))
        assert service.workers.jobs_started == 4 and " CET" in cet and " CET" not in completed
        assert len(service.reports) == 2
    finally:
        await service.stop()
        await store.close()


async def test_deleted_and_evicted_snapshots_leave_the_cache(tmp_path):
    store, service = await make(
        tmp_path, window_before_s=5, window_after_s=0, max_count=2, capture_timeout_s=1
    )
    try:
        await write_polls(store, time.time())
        first = await service.capture("db1", "manual")
        second = await service.capture("db1", "manual")
        await service.report_html(first)
        await service.report_html(second)
        assert len(service.reports) == 2
        await service.delete(second)
        assert len(service.reports) == 1
        await service.capture("db1", "manual")
        await service.capture("db1", "manual")  # max_count 2: the first is evicted
        assert first not in {s.id for s in await service.list()} and len(service.reports) == 0
    finally:
        await service.stop()
        await store.close()


def test_the_cache_keeps_within_its_budget_least_recently_used_out():
    cache = ReportCache(max_bytes=10)
    cache.put((1, "a", "utc"), "x" * 4)
    cache.put((2, "a", "utc"), "y" * 4)
    assert cache.get((1, "a", "utc")) == "x" * 4  # 1 is now the most recently used
    cache.put((3, "a", "utc"), "z" * 4)
    assert cache.get((2, "a", "utc")) is None and cache.get((1, "a", "utc")) and cache.get((3, "a", "utc"))
    assert cache.size == 8
    cache.put((1, "b", "utc"), "w" * 2)  # a new version replaces the old one
    assert cache.get((1, "a", "utc")) is None and cache.get((1, "b", "utc")) == "ww" and cache.size == 6
    cache.put((4, "a", "utc"), "v" * 11)  # larger than the whole budget: not kept, nothing pushed out
    assert cache.get((4, "a", "utc")) is None and len(cache) == 2


def test_each_view_of_a_version_is_kept_until_the_version_changes():
    cache = ReportCache(max_bytes=100)
    cache.put((1, "a", "utc"), "x")
    cache.put((1, "a", "cet"), "y")  # another zone of the same document: both kept
    assert cache.get((1, "a", "utc")) == "x" and cache.get((1, "a", "cet")) == "y"
    cache.put((1, "a", "cet"), "yy")  # the same view again replaces itself, counted once
    assert cache.size == 3
    cache.put((1, "b", "utc"), "z")  # a new version: every view of the old one goes
    assert len(cache) == 1 and cache.size == 1
