"""Queued requests: exact totals per group from an aggregate, the longest waiters listed, bounded."""

from __future__ import annotations

from poolscope.poller.collectors import thread_pool_queues
from poolscope.poller.collectors.thread_pool_queue_summary import ThreadPoolQueueSummary
from poolscope.poller.collectors.thread_pool_queues import ThreadPoolQueues

from .helpers import cpu_burst, global_variables, parse_context, poll_until, poller_for

CTX = parse_context()


def test_summary_counts_every_queued_request_and_averages_over_all():
    rows = [
        {"group_id": 1, "queued": 3, "oldest_us": 9000, "total_us": 15000},
        {"group_id": 0, "queued": 1, "oldest_us": 1000, "total_us": 1000},
    ]
    output = ThreadPoolQueueSummary().parse(rows, CTX)
    summary = output.section
    assert summary.total == 4
    assert summary.oldest_ms_by_group == {0: 1.0, 1: 9.0}
    assert summary.wait_max_ms == 9.0
    assert summary.wait_avg_ms == 4.0  # 16 ms over 4 requests, not the mean of the group means
    values = {s.metric: s.value for s in output.samples}
    assert values == {"tp_queued_connections": 4.0, "tp_queue_wait_max_ms": 9.0, "tp_queue_wait_avg_ms": 4.0}


def test_empty_queue_reads_zero_not_missing():
    output = ThreadPoolQueueSummary().parse([], CTX)
    assert output.section.total == 0 and output.section.wait_max_ms is None
    assert {s.metric: s.value for s in output.samples}["tp_queue_wait_max_ms"] == 0.0


def test_listing_is_longest_first():
    rows = [
        {
            "group_id": 0,
            "position": i,
            "priority": 1,
            "connection_id": 10 + i,
            "queueing_time_microseconds": us,
        }
        for i, us in enumerate([500, 7000, 2500])
    ]
    listed = ThreadPoolQueues().parse(rows, CTX).section
    assert [q.connection_id for q in listed] == [11, 12, 10]
    assert [q.priority for q in listed] == ["low"] * 3


async def test_a_burst_lists_only_the_longest_waiters_and_counts_them_all(mariadb, monitor_dsn, monkeypatch):
    monkeypatch.setattr(thread_pool_queues, "MAX_LISTED", 1)
    poller = poller_for(monitor_dsn)
    await poller.poll_once()
    with (
        global_variables(mariadb, thread_pool_size=1, thread_pool_stall_limit=500),
        cpu_burst(mariadb, heavy=4, light=8, seconds=1.5),
    ):
        seen = await poll_until(
            poller,
            lambda r: r.state is not None and (r.state.queued_connections or 0) > len(r.state.queue),
            timeout_s=20,
            every_s=0.2,
        )
    await poller.close()
    assert all(r.info.status == "up" for r in seen)
    (listing,) = [c for c in poller.collectors if c.name == "thread_pool_queues"]
    assert listing.sql(seen[-1].info.server).endswith("ORDER BY QUEUEING_TIME_MICROSECONDS DESC LIMIT 1"), (
        "the server sorts and bounds the listing: a burst is never read whole"
    )
    last = seen[-1].state
    assert last.queued_connections > len(last.queue) == 1, "more requests waited than were listed"
    (group,) = [g for g in last.groups if g.group_id == last.queue[0].group_id]
    assert group.oldest_queued_ms is not None, "the listed request's group has a queue in the aggregate"
