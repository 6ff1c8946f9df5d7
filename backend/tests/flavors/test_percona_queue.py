"""Percona 8.4.10-10's queue monitoring, from the fixtures percona/8.4 (8.4.8-8) and percona/8.4.10.

Sources (tests/fixtures/percona/8.4.10/README.md): psmysql-docs/docs/threadpool.md and release
notes 8.4.10-10 (PS-10083); percona-server sql/threadpool_unix.cc and sql-common/live_stats.h.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from poolscope.analysis.counters import CounterMemory
from poolscope.flavors import CAP_QUEUE_DEPTH, CAP_QUEUE_WAIT_STATS
from poolscope.poller.collectors.base import ParseContext
from poolscope.poller.collectors.percona_threadpool_status import PerconaThreadpoolStatus, parse_stat_string
from poolscope.poller.target_poller import PollResult
from poolscope.recommend.base import RecommendContext, RecommendFinding
from poolscope.recommend.rules import thread_pool_stall_limit, transaction_priority
from poolscope.recommend.window import Window
from poolscope.schemas import SeriesOut, ServerInfo
from poolscope_dev import percona_stats
from tests import FIXTURES_ROOT
from tests.flavors.replay import fixture_copy, polls

STAT = "Threadpool_average_queue_wait_us"
PERCONA = ServerInfo(
    flavor="percona", version="8.4.10-10", thread_handling="pool-of-threads", pool_enabled=True
)


def stat_of(result: PollResult, name: str = STAT):
    assert result.state and result.state.pool
    return next(s for s in result.state.pool.queue_wait if s.name == name)


async def test_before_8_4_10_there_are_no_queue_statistics_and_no_chart_for_them():
    result = (await polls("percona/8.4", 3))[-1]
    server = result.info.server
    assert server.version_tuple == (8, 4, 8)
    # Not offered by version (>= 8.4.0): the statistics do not exist before 8.4.10-10.
    assert CAP_QUEUE_WAIT_STATS not in server.capabilities and CAP_QUEUE_DEPTH not in server.capabilities
    assert result.state.pool.queue_wait == [] and result.state.pool.queue_depth is None
    assert not {s.metric for s in result.samples} & {"pool_stat_avg", "tp_queued_connections"}


async def test_from_8_4_10_the_capabilities_follow_what_the_server_reports():
    result = (await polls("percona/8.4.10", 2))[-1]
    assert {CAP_QUEUE_WAIT_STATS, CAP_QUEUE_DEPTH} <= set(result.info.server.capabilities)


async def test_the_capability_comes_from_the_status_not_the_version(tmp_path):
    # A build reporting an older version that has the statistics: capabilities follow the status.
    copy = fixture_copy(tmp_path, "percona/8.4.10", version="8.0.99-90")
    result = (await polls(copy, 2))[-1]
    assert {CAP_QUEUE_WAIT_STATS, CAP_QUEUE_DEPTH} <= set(result.info.server.capabilities)


def test_the_server_format_parses_exactly():
    text = "avg: 590.000, min: 470.000, max: 736.000, dev: 110.266, cnt: 5"  # the manual's example
    stat = parse_stat_string(STAT, text)
    assert stat is not None
    assert (stat.avg, stat.min, stat.max, stat.dev, stat.cnt) == (590.0, 470.0, 736.0, 110.266, 5.0)


async def test_each_poll_reports_the_mean_wait_of_its_own_requests_not_the_lifetime_average():
    results = await polls("percona/8.4.10", 24)
    readings = [stat_of(r) for r in results]
    checked = 0
    for i, new in enumerate(readings):
        if new.window_avg is None:
            continue
        # The window's first reading is the one window_count requests earlier (this poll alone
        # unless the window widened): Δ(avg·cnt)/Δcnt from the two readings the server printed.
        old = next(o for o in readings[:i] if o.cnt == new.cnt - new.window_count)
        expected = (new.avg * new.cnt - old.avg * old.cnt) / (new.cnt - old.cnt)
        assert new.window_avg == pytest.approx(max(expected, 0.0), abs=1e-6)
        checked += 1
    assert checked >= 4
    stalled = [s for s in readings if (s.window_avg or 0) > 200_000]
    assert stalled, "the fixture's stall must show in the per-poll mean"
    # ... while the lifetime average the server prints stays under 0.3 ms throughout.
    assert all(s.avg is not None and s.avg < 300 for s in stalled)
    # The whole pool's mean (both queues, ms) is charted and feeds the stall-limit rule.
    window_ms = [
        next((s.value for s in r.samples if s.metric == "tp_queue_wait_window_avg_ms"), None) for r in results
    ]
    assert max(v for v in window_ms if v is not None) > 200


def test_the_fixture_lifetime_counts_follow_its_uptime():
    # backend/tests/fixtures/percona/8.4.10/README.md: cnt at frame 0 = Uptime × the calm polls' dequeue rate.
    first = {r["Variable_name"]: r["Value"] for r in _frames("percona_threadpool_status.json")[0]}
    uptime = next(r["Value"] for r in _frames("global_status.json")[0] if r["Variable_name"] == "Uptime")
    normal = parse_stat_string(STAT, first[STAT])
    assert normal is not None and normal.cnt == percona_stats.base_counts(float(uptime))[0] > 10**9


def _frames(name: str) -> list[list[dict[str, str]]]:
    return json.loads((FIXTURES_ROOT / "percona/8.4.10" / name).read_text())["frames"]


@pytest.mark.parametrize("lifetime", [10**7, 10**9], ids=["1e7", "1e9"])
async def test_a_stall_shows_at_any_uptime(tmp_path, lifetime):
    """The fixture's stall replayed on a server whose lifetime counts start at 10^7 (hours up) and
    at 10^9 (days up): each stalled poll's mean wait is the truth within a few per cent, and the
    stall-limit recommendation follows from it either way."""
    copy = fixture_copy(tmp_path, "percona/8.4.10")
    path = Path(copy) / "percona_threadpool_status.json"
    data = json.loads(path.read_text())
    rows = percona_stats.frames(lifetime, lifetime * 3 // 10)
    data["frames"] = [[{"Variable_name": k, "Value": v} for k, v in frame.items()] for frame in rows]
    path.write_text(json.dumps(data))
    results = await polls(copy, len(rows))
    truth = percona_stats.true_means()
    stalled = [i for i, mean in enumerate(truth) if mean is not None and mean > 50_000]
    assert len(stalled) == 4
    for i in stalled:
        measured = stat_of(results[i]).window_avg
        assert measured == pytest.approx(truth[i], rel=0.03), (i, measured, truth[i])
    finding = thread_pool_stall_limit.evaluate(_rule_context(results))
    assert isinstance(finding, RecommendFinding), finding
    assert int(finding.proposed) < 500


def _ctx(now: float) -> ParseContext:
    return ParseContext(now=now, server=PERCONA, counters=CounterMemory())


def _row(avg: float, cnt: int) -> dict[str, object]:
    return {"variable_name": STAT, "value": f"avg: {avg:.3f}, min: 0.000, max: 9.000, dev: 1.000, cnt: {cnt}"}


def test_a_falling_count_is_a_restart_not_a_negative_wait():
    collector = PerconaThreadpoolStatus()
    collector.parse([_row(100.0, 10_000)], _ctx(0.0))
    after_restart = collector.parse([_row(50.0, 400)], _ctx(1.0)).section.stats[0]
    assert after_restart.window_avg is None and after_restart.window_count is None
    next_poll = collector.parse([_row(60.0, 500)], _ctx(2.0)).section.stats[0]
    assert next_poll.window_avg == pytest.approx((60.0 * 500 - 50.0 * 400) / 100)


def test_too_few_requests_to_outweigh_the_rounding_widen_the_window():
    collector = PerconaThreadpoolStatus()
    big = 2_000_000_000  # a long uptime: avg's 3 decimals hide up to 1e6 µs·requests
    collector.parse([_row(200.0, big)], _ctx(0.0))
    quiet = collector.parse([_row(200.0, big + 5)], _ctx(1.0)).section.stats[0]
    assert quiet.window_avg is None  # 5 requests cannot be told from the rounding
    calm = collector.parse([_row(200.000, big + 5_005)], _ctx(2.0)).section.stats[0]
    assert calm.window_avg is None  # 5,000 requests of 0.2 ms: still ±0.8 ms, widen on
    later = collector.parse([_row(200.001, big + 4_005_005)], _ctx(3.0)).section.stats[0]
    # 4 million requests are enough on their own: the poll is its own window.
    assert later.window_s == 1.0 and later.window_count == 4_000_000
    expected = (200.001 * (big + 4_005_005) - 200.0 * (big + 5_005)) / 4_000_000
    assert later.window_avg == pytest.approx(expected)


def test_a_stall_after_quiet_polls_keeps_its_own_mean():
    collector = PerconaThreadpoolStatus()
    big = 1_000_000_000
    collector.parse([_row(200.0, big)], _ctx(0.0))
    for poll in range(1, 4):  # calm polls the rounding hides: the window widens over them
        calm = collector.parse([_row(200.0, big + 2_000 * poll)], _ctx(float(poll))).section.stats[0]
        assert calm.window_avg is None
    # 300 requests that waited 0.7 s each, after 6,000 calm ones: the lifetime avg moves 0.21 µs.
    total = 200.0 * (big + 6_000) + 300 * 700_000.0
    stall = collector.parse([_row(total / (big + 6_300), big + 6_300)], _ctx(4.0)).section.stats[0]
    assert stall.window_count == 300 and stall.window_s == 1.0
    assert stall.window_avg == pytest.approx(700_000.0, rel=0.02)


async def test_queue_depth_is_read_and_feeds_the_whole_pool_queue_series():
    results = await polls("percona/8.4.10", 24)
    depths = [r.state.pool.queue_depth for r in results]
    assert all(d is not None for d in depths)
    deepest = max(results, key=lambda r: r.state.pool.queue_depth.total)
    depth = deepest.state.pool.queue_depth
    assert (depth.normal, depth.high, depth.starved) == (83, 11, 64)
    assert deepest.state.queued_connections == 94 and deepest.info.summary.queued_connections == 94
    samples = {(s.metric, s.labels.get("queue")): s.value for s in deepest.samples}
    assert samples[("tp_queued_connections", None)] == 94
    assert samples[("pool_queue_requests", "normal")] == 83 and samples[("pool_queue_starved", None)] == 64
    # No per-group model is invented from a whole-pool count.
    assert deepest.state.groups == [] and ("tp_group_queue_length", None) not in samples


def _window_from(results: list[PollResult]) -> Window:
    series: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float | None]]] = {}
    for result in results:
        for s in result.samples:
            series.setdefault((s.metric, tuple(sorted(s.labels.items()))), []).append(
                (result.state.ts, s.value)
            )
    out = [SeriesOut(metric=m, labels=dict(labels), points=points) for (m, labels), points in series.items()]
    return Window(results[0].state.ts, results[-1].state.ts, out)


def _rule_context(results: list[PollResult], **variables: str) -> RecommendContext:
    last = results[-1]
    state = last.state.model_copy(update={"variables": {**last.state.variables, **variables}})
    return RecommendContext(
        target="t",
        now=state.ts,
        server=last.info.server,
        state=state,
        info=last.info,
        window=_window_from(results),
        cpus=8,
    )


async def test_queue_based_recommendations_work_on_percona():
    results = await polls("percona/8.4.10", 24)
    stall = thread_pool_stall_limit.evaluate(_rule_context(results))
    assert isinstance(stall, RecommendFinding), stall
    assert (stall.variable, stall.current) == ("thread_pool_stall_limit", "500")
    assert int(stall.proposed) < 500
    assert any(e.metric == "tp_queued_connections" for e in stall.evidence)
    assert any(e.metric == "tp_queue_wait_window_avg_ms" for e in stall.evidence)
    # Transactions queued behind new work while the priority queue was off.
    priority = transaction_priority.evaluate(_rule_context(results, thread_pool_high_prio_mode="none"))
    assert isinstance(priority, RecommendFinding), priority
    assert (priority.variable, priority.proposed) == ("thread_pool_high_prio_mode", "transactions")
