"""Every rule from data: it recommends when the evidence is there, and says why not when it is not."""

from __future__ import annotations

from poolscope.recommend.base import Clear, RecommendFinding, nice_round
from poolscope.recommend.flavors import spec
from poolscope.recommend.rules import (
    extra_max_connections,
    max_connections,
    thread_cache_size,
    thread_handling,
    thread_pool_exact_stats,
    thread_pool_max_threads,
    thread_pool_oversubscribe,
    thread_pool_size,
    thread_pool_stall_limit,
    transaction_priority,
)
from poolscope.recommend.window import Window
from tests.recommend.builders import ctx

N = 60  # polls in the test windows


def finding(result: RecommendFinding | Clear) -> RecommendFinding:
    assert isinstance(result, RecommendFinding), getattr(result, "reason", result)
    return result


def clear(result: RecommendFinding | Clear) -> str:
    assert isinstance(result, Clear), result
    return result.reason


def test_nice_round_and_window_statistics():
    assert [nice_round(v) for v in (0.5, 3, 11, 30, 60, 101, 1500)] == [1, 5, 20, 50, 100, 200, 2000]
    from tests.recommend.builders import ctx as build

    w = build({}, {"q": {"0": [0, 2, 4], "1": [1, 1, 1]}}).window
    assert isinstance(w, Window)
    assert w.totals("q") == [1, 3, 5]
    assert w.mean("q") == 3 and w.peak("q") == 5 and w.fraction("q", lambda v: v > 2) == 2 / 3
    assert w.count("missing") == 0 and w.mean("missing") is None


def test_pool_size_raised_when_cpus_idle_with_queues():
    c = ctx(
        {"thread_pool_size": "2"},
        {"tp_group_queue_length": [3] * N, "tp_group_active_threads": [1.5] * N},
        cpus=4,
    )
    f = finding(thread_pool_size.evaluate(c))
    assert (f.variable, f.current, f.proposed) == ("thread_pool_size", "2", "4")
    assert any(e.metric == "tp_group_queue_length" and e.value == "100%" for e in f.evidence)
    assert "4 CPUs" in f.summary


def test_pool_size_left_when_cpus_busy_or_unknown():
    busy = ctx(
        {"thread_pool_size": "2"}, {"tp_group_queue_length": [3] * N, "tp_group_active_threads": [4] * N}
    )
    assert "no idle CPU" in clear(thread_pool_size.evaluate(busy))
    unknown = ctx({"thread_pool_size": "2"}, {"tp_group_queue_length": [3] * N}, cpus=None)
    assert "CPU count" in clear(thread_pool_size.evaluate(unknown))
    few = ctx({"thread_pool_size": "2"}, {"tp_group_queue_length": [3] * 3})
    assert "only 3 polls" in clear(thread_pool_size.evaluate(few))


def test_stall_limit_lowered_on_long_waits_like_seed_001():
    c = ctx(
        {"thread_pool_stall_limit": "500"},
        {
            "tp_group_queue_length": [5] * N,
            "tp_group_stalled": [0] * (N - 10) + [1] * 10,
            "tp_queue_wait_max_ms": [450] * N,
            "tp_group_stalls_per_s": [0.2] * N,
            "tp_group_dequeues_per_s": [100] * N,
            "threads_running": [3] * N,
            "qps": [1000] * N,
        },
    )
    f = finding(thread_pool_stall_limit.evaluate(c))
    assert (f.current, f.proposed) == ("500", "30")  # 2 × (3 - 1) / 1000 s = 4 ms < floor 30 ms
    assert any(e.label == "longest queue wait" and e.value == "450 ms" for e in f.evidence)
    assert any(e.value == "2.0 ms" and e.metric == "threads_running" for e in f.evidence)
    # Long statements in the mix: twice their weighted mean, still well under the limit.
    slow = ctx(
        {"thread_pool_stall_limit": "5000"},
        {
            "tp_group_queue_length": [5] * N,
            "tp_queue_wait_max_ms": [4800] * N,
            "threads_running": [3] * N,
            "qps": [25] * N,
        },
    )
    assert finding(thread_pool_stall_limit.evaluate(slow)).proposed == "200"  # 2 × 80 ms -> 200


def test_stall_limit_raised_when_most_requests_stall_and_in_10ms_units_on_mysql():
    series = {
        "tp_group_queue_length": [0] * N,
        "tp_group_stalls_per_s": [30] * N,
        "tp_group_dequeues_per_s": [100] * N,
    }
    f = finding(thread_pool_stall_limit.evaluate(ctx({"thread_pool_stall_limit": "30"}, series)))
    assert (f.current, f.proposed) == ("30", "100")
    # MySQL Enterprise counts 10 ms units: 3 units = 30 ms -> 100 ms = 10 units.
    m = finding(
        thread_pool_stall_limit.evaluate(ctx({"thread_pool_stall_limit": "3"}, series, flavor="mysql"))
    )
    assert (m.current, m.proposed, m.unit) == ("3", "10", "×10 ms")


def test_stall_limit_clear_when_queue_moves():
    c = ctx(
        {"thread_pool_stall_limit": "500"},
        {
            "tp_group_queue_length": [0] * N,
            "tp_queue_wait_max_ms": [2] * N,
            "tp_group_dequeues_per_s": [50] * N,
        },
    )
    assert "longest queue wait 2 ms" in clear(thread_pool_stall_limit.evaluate(c))


def test_max_threads_near_cap():
    f = finding(
        thread_pool_max_threads.evaluate(ctx({"thread_pool_max_threads": "100"}, {"pool_threads": [97] * N}))
    )
    assert (f.proposed, f.severity) == ("200", "critical")
    assert "peaked at 50" in clear(
        thread_pool_max_threads.evaluate(ctx({"thread_pool_max_threads": "100"}, {"pool_threads": [50] * N}))
    )
    assert clear(thread_pool_max_threads.evaluate(ctx({"thread_pool_max_threads": "1"}, flavor="mysql")))


def test_oversubscribe_left_alone_at_default_and_reset_when_changed_without_reason():
    quiet = {"tp_group_queue_length": [0] * N, "tp_group_active_threads": [1] * N}
    assert "leaving alone" in clear(
        thread_pool_oversubscribe.evaluate(ctx({"thread_pool_oversubscribe": "3"}, quiet))
    )
    f = finding(thread_pool_oversubscribe.evaluate(ctx({"thread_pool_oversubscribe": "10"}, quiet)))
    assert (f.current, f.proposed) == ("10", "3")


def test_priority_for_transactions_waiting_in_queue():
    series = {"tp_group_queue_length": [4] * N, "trx_active": [6] * N, "trx_lock_waits": [2] * N}
    f = finding(transaction_priority.evaluate(ctx({"thread_pool_priority": "high"}, series)))
    assert (f.variable, f.proposed) == ("thread_pool_priority", "auto")
    p = finding(
        transaction_priority.evaluate(ctx({"thread_pool_high_prio_mode": "none"}, series, flavor="percona"))
    )
    assert (p.variable, p.proposed) == ("thread_pool_high_prio_mode", "transactions")
    assert "already auto" in clear(
        transaction_priority.evaluate(ctx({"thread_pool_priority": "auto"}, series))
    )
    idle = {"tp_group_queue_length": [0] * N, "trx_active": [0] * N}
    assert "did not wait" in clear(transaction_priority.evaluate(ctx({"thread_pool_priority": "high"}, idle)))


def test_exact_stats_when_queue_times_are_coarse():
    series = {"tp_group_queue_length": [1] * N, "tp_queue_wait_max_ms": [300] * N}
    f = finding(thread_pool_exact_stats.evaluate(ctx({"thread_pool_exact_stats": "OFF"}, series)))
    assert (f.current, f.proposed, f.severity) == ("OFF", "ON", "info")
    assert "exact" in clear(thread_pool_exact_stats.evaluate(ctx({"thread_pool_exact_stats": "ON"}, series)))
    # Percona has no such variable, so it is not in the polled variables.
    assert "no exact_stats" in clear(thread_pool_exact_stats.evaluate(ctx({}, series, flavor="percona")))


def test_thread_cache_only_in_one_thread_per_connection_regime():
    series = {"thread_cache_miss_ratio": [0.9] * N, "connections_per_s": [20] * N}
    ratios = {"ratios": {"thread_cache_miss": {"value": 0.9, "regime": "one-thread-per-connection"}}}
    f = finding(thread_cache_size.evaluate(ctx({"thread_cache_size": "0"}, series, pool=False, state=ratios)))
    assert (f.current, f.proposed) == ("0", "20")
    pooled = {"ratios": {"thread_cache_miss": {"value": None, "regime": "pool-of-threads"}}}
    assert "ignore the thread cache" in clear(
        thread_cache_size.evaluate(ctx({"thread_cache_size": "0"}, series, state=pooled))
    )


def test_max_connections_headroom():
    f = finding(max_connections.evaluate(ctx({"max_connections": "100"}, {"threads_connected": [96] * N})))
    assert (f.proposed, f.severity) == ("200", "critical")
    assert "peaked at 40" in clear(
        max_connections.evaluate(ctx({"max_connections": "100"}, {"threads_connected": [40] * N}))
    )


def test_extra_max_connections_when_monitoring_takes_the_only_slot_or_fell_back():
    f = finding(extra_max_connections.evaluate(ctx({"extra_max_connections": "1"}, extra_port=3307)))
    assert (f.current, f.proposed) == ("1", "3")
    fell = ctx(
        {"extra_max_connections": "5"},
        extra_port=3307,
        info={
            "connection": {"host": "h", "port": 3306, "port_kind": "port", "note": "extra_port 3307 refused"}
        },
    )
    assert finding(extra_max_connections.evaluate(fell)).proposed == "7"
    assert "no extra_port" in clear(extra_max_connections.evaluate(ctx({"extra_max_connections": "1"})))


def test_thread_handling_turn_pool_on_needs_restart():
    c = ctx(
        {"thread_handling": "one-thread-per-connection"},
        {"threads_connected": [600] * N, "threads_running": [20] * N},
        pool=False,
    )
    f = finding(thread_handling.evaluate(c))
    assert (f.proposed, f.apply) == ("pool-of-threads", "restart")
    low = ctx(
        {"thread_handling": "one-thread-per-connection"},
        {"threads_connected": [20] * N, "threads_running": [2] * N},
        pool=False,
    )
    assert "low enough" in clear(thread_handling.evaluate(low))


def test_flavor_table_names_and_units():
    def var(flavor: str, key: str, pool: bool = True):
        return spec(ctx({}, flavor=flavor, pool=pool).server, key)

    assert var("mariadb", "priority").name == "thread_pool_priority"  # type: ignore[union-attr]
    assert var("percona", "priority").name == "thread_pool_high_prio_mode"  # type: ignore[union-attr]
    mysql_stall = var("mysql", "stall_limit")
    assert mysql_stall is not None and mysql_stall.to_ms("6") == 60 and mysql_stall.from_ms(30) == 4  # min 4
    assert var("mysql", "max_threads") is None
    assert var("mariadb", "pool_size", pool=False).name == "thread_pool_size"  # type: ignore[union-attr]
    assert var("mariadb", "max_connections").name == "max_connections"  # type: ignore[union-attr]
