"""One-thread-per-connection on a live MariaDB: what the pool-off view is built from.

The seeds watch `count(*) from processlist where command != 'Sleep'` to see concurrency pile up
without a pool (seed 000: 6 → 104 with 100 sysbench threads); the pool-off view shows that count
(sessions_active) next to Threads_running / Threads_connected and the thread-cache miss ratio.
"""

from __future__ import annotations

import threading

from poolscope.flavors import MARIADB, enable_spec
from poolscope_dev.sandbox import SBTEST_USER
from tests.poller.helpers import poll_until, poller_for


async def test_pool_off_counts_active_sessions_running_threads_and_says_how_to_enable(
    mariadb_pool_off, pool_off_monitor_dsn
):
    sleepers = [mariadb_pool_off.connect(SBTEST_USER) for _ in range(3)]

    def sleep(conn) -> None:
        with conn.cursor() as cur:
            cur.execute("SELECT SLEEP(4) /* poolscope pool-off test */")

    threads = [threading.Thread(target=sleep, args=(c,), daemon=True) for c in sleepers]
    for thread in threads:
        thread.start()
    poller = poller_for(pool_off_monitor_dsn)
    try:
        seen = await poll_until(
            poller,
            lambda r: (
                r.state is not None
                and sum(1 for s in r.state.sessions if "poolscope pool-off test" in (s.info or "")) == 3
            ),
            timeout_s=10,
            every_s=0.3,
        )
    finally:
        for thread in threads:
            thread.join(timeout=10)
        for conn in sleepers:
            conn.close()
        await poller.close()
    result = seen[-1]
    state, server = result.state, result.info.server
    assert sum(1 for s in state.sessions if "poolscope pool-off test" in (s.info or "")) == 3
    samples = {s.metric: s.value for s in result.samples if not s.labels}
    assert samples["sessions_active"] >= 3
    # The three sleepers run on their own threads: Threads_running counts them (plus our poll).
    assert state.threads.running >= 4
    assert state.threads.connected >= 4
    assert state.pool is None and state.groups == []
    assert (server.pool_kind, server.capabilities, server.notes) == (None, [], [])
    assert enable_spec(server) is MARIADB and "pool-of-threads" in (server.enable_snippet or "")


async def test_pool_off_thread_cache_miss_ratio_is_windowed_over_new_connections(
    mariadb_pool_off, pool_off_monitor_dsn
):
    poller = poller_for(pool_off_monitor_dsn)
    await poller.poll_once()
    # Short-lived connections are what the thread cache is for (seed 002).
    for _ in range(6):
        mariadb_pool_off.connect(SBTEST_USER).close()
    result = await poller.poll_once()
    await poller.close()
    ratio = result.state.ratios.thread_cache_miss
    assert ratio.regime == "one-thread-per-connection"
    assert ratio.value is not None and 0.0 <= ratio.value <= 1.0
    assert (
        result.state.throughput.connections_per_s is not None
        and result.state.throughput.connections_per_s > 0
    )
