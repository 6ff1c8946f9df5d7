"""The poller against a real MariaDB: extra_port, every collector, failures isolated per collector."""

from __future__ import annotations

import asyncio
import time

import pytest

from poolscope.poller.collectors import processlist
from poolscope.poller.target_poller import PollResult
from poolscope_dev.sandbox import MONITOR_PASSWORD, MONITOR_USER, SBTEST_USER, free_port

from .helpers import calibrate_benchmark, cpu_burst, global_variables, poll_until, poller_for, running

POOL_COLLECTORS = {
    "thread_pool_groups",
    "thread_pool_stats",
    "thread_pool_queue_summary",
    "thread_pool_queues",
    "thread_pool_waits",
}
# Other flavors' pools (Percona, MySQL Enterprise): skipped on MariaDB, tested from fixtures.
OTHER_POOL_COLLECTORS = {
    "percona_threadpool_status",
    "mysql_tp_group_state",
    "mysql_tp_group_stats",
    "mysql_tp_thread_state",
}
# The sandbox runs without the Performance Schema (MariaDB's default): its sources say so.
PERFORMANCE_SCHEMA_COLLECTORS = {"metadata_locks", "mdl_instrument", "statement_digests"}
# Who holds the pool: skipped where no pool runs (data_lock_waits is MySQL 8's, skipped on MariaDB).
HOLDER_COLLECTORS = {"innodb_lock_waits", "data_lock_waits", *PERFORMANCE_SCHEMA_COLLECTORS}


async def test_polls_every_collector_on_extra_port(mariadb_line, line_dsn):
    poller = poller_for(line_dsn)
    await poller.poll_once()
    result = await poller.poll_once()
    await poller.close()
    info, state = result.info, result.state
    assert info.status == "up", info.reason
    assert info.connection.port_kind == "extra_port"
    assert info.connection.port == mariadb_line.extra_port
    assert info.server.flavor == "mariadb" and info.server.pool_enabled
    assert info.server.queue_time_mode == "exact"
    failed = {c.name: c.error or c.skipped for c in state.collectors if not c.ok}
    assert set(failed) == OTHER_POOL_COLLECTORS | PERFORMANCE_SCHEMA_COLLECTORS | {"data_lock_waits"}
    assert all(
        reason
        and ("only for the" in reason or "performance_schema is OFF" in reason or "MySQL 8.0+" in reason)
        for reason in failed.values()
    )
    assert [g.group_id for g in state.groups] == [0, 1]
    assert state.variables["thread_pool_size"] == "2"
    assert state.variables["thread_pool_exact_stats"] == "ON"  # SHOW's spelling, whatever the query
    assert state.variables["thread_pool_priority"] == "auto"
    assert len(state.waits) == 12
    assert state.throughput.qps is not None and state.throughput.qps >= 0
    metrics = {(s.metric, s.labels.get("group")) for s in result.samples}
    for group in ("0", "1"):
        assert ("tp_group_queue_length", group) in metrics
        assert ("tp_group_stalled", group) in metrics
    assert ("poll_duration_ms", None) in metrics


async def test_a_timed_out_read_between_polls_does_not_take_the_next_poll_down(mariadb, monitor_dsn):
    # An incident snapshot's read on the poll's connection timed out: the reader closed that
    # connection (the rest of the answer was left on it); the next poll connects again.
    poller = poller_for(monitor_dsn)
    try:
        assert (await poller.poll_once()).info.status == "up"
        with pytest.raises(TimeoutError):
            await poller.read_between_polls(["SELECT SLEEP(2)"], 0.2)
        result = await poller.poll_once()
        assert result.info.status == "up", result.info.reason
    finally:
        await poller.close()


async def test_extra_port_zero_means_the_normal_port(mariadb, monitor_dsn):
    poller = poller_for(monitor_dsn, extra_port=0)
    result = await poller.poll_once()
    await poller.close()
    assert result.info.connection.port_kind == "port"
    assert result.info.connection.port == mariadb.port


async def test_unusable_extra_port_falls_back_and_says_why(mariadb, monitor_dsn):
    closed = free_port()
    poller = poller_for(monitor_dsn, extra_port=closed)
    result = await poller.poll_once()
    await poller.close()
    assert result.info.status == "up"
    assert result.info.connection.port_kind == "port"
    assert f"extra_port {closed} unusable" in result.info.connection.note


async def test_missing_process_privilege_fails_only_those_collectors(noproc_dsn):
    poller = poller_for(noproc_dsn)
    first = await poller.poll_once()
    second = await poller.poll_once()
    await poller.close()
    assert first.info.status == second.info.status == "up"
    by_name = {c.name: c for c in first.state.collectors}
    assert "1227" in by_name["innodb_trx"].error
    assert all(by_name[name].ok for name in POOL_COLLECTORS | {"global_status", "global_variables"})
    assert first.state.missing_privileges == ["PROCESS"]
    # Retried rarely, not every second, and still reported.
    later = {c.name: c for c in second.state.collectors}
    assert later["innodb_trx"].skipped.startswith("needs PROCESS")
    assert second.info.missing_privileges == ["PROCESS"]
    assert second.state.groups, "the pool's own tables need no privilege and must still be read"


async def test_wrong_password_marks_the_target_down_without_leaking_it(mariadb):
    dsn = f"mysql://{MONITOR_USER}:not-{MONITOR_PASSWORD}@127.0.0.1:{mariadb.port}/"
    poller = poller_for(dsn)
    result = await poller.poll_once()
    assert result.info.status == "down"
    assert "1045" in result.info.reason
    assert MONITOR_PASSWORD not in result.info.model_dump_json()
    assert [s.metric for s in result.samples] == ["target_up"]


async def test_malformed_dsn_is_that_target_down_with_a_clear_reason():
    poller = poller_for("http://mon:hunter2@127.0.0.1:3306/")
    result = await poller.poll_once()
    assert result.info.status == "down"
    assert "must start with mysql://" in result.info.reason
    assert "hunter2" not in result.info.model_dump_json()


async def test_unreachable_server_is_down_with_reason():
    poller = poller_for(f"mysql://u:pw@127.0.0.1:{free_port()}/")
    result = await poller.poll_once()
    assert result.info.status == "down"
    assert "cannot connect" in result.info.reason and "2003" in result.info.reason


async def test_pool_off_is_reported_as_off_not_as_zeros(pool_off_monitor_dsn):
    poller = poller_for(pool_off_monitor_dsn)
    await poller.poll_once()
    result = await poller.poll_once()
    await poller.close()
    assert result.info.server.pool_enabled is False
    assert result.info.server.thread_handling == "one-thread-per-connection"
    assert result.info.connection.port_kind == "port"  # no extra_port on that server
    skipped = {c.name: c.skipped for c in result.state.collectors if c.skipped}
    assert set(skipped) == POOL_COLLECTORS | OTHER_POOL_COLLECTORS | HOLDER_COLLECTORS
    assert all(
        "thread pool off" in reason or "MySQL 8.0+" in reason or "performance_schema is OFF" in reason
        for reason in skipped.values()
    )
    assert result.state.groups == []
    assert result.info.summary.queue_length is None
    assert result.state.ratios.thread_cache_miss.regime == "one-thread-per-connection"


async def test_turning_exact_stats_off_switches_the_queue_time_mode(mariadb_line, line_dsn):
    poller = poller_for(line_dsn)
    await poller.poll_once()
    with global_variables(mariadb_line, thread_pool_exact_stats="OFF"):
        # Variables are read every few seconds (their resolution), so the change shows within that.
        seen = await poll_until(poller, lambda r: r.info.server.queue_time_mode == "coarse", timeout_s=10)
    poller.refresh_soon("global_variables")  # as an apply does: the next poll reads them again
    after = await poller.poll_once()
    await poller.close()
    assert seen[-1].state.variables["thread_pool_exact_stats"] == "OFF"
    assert seen[-1].info.server.queue_time_mode == "coarse"
    assert after.info.server.queue_time_mode == "exact"


async def test_slow_sources_are_carried_between_their_reads(mariadb_line, line_dsn):
    poller = poller_for(line_dsn)
    first = await poller.poll_once()
    second = await poller.poll_once()
    await poller.close()
    ran = {c.name: c for c in first.state.collectors}
    carried = {c.name: c for c in second.state.collectors}
    for name in ("global_variables", "innodb_buffer_pool", "thread_pool_waits"):
        assert ran[name].ok and ran[name].carried_s is None and ran[name].duration_ms is not None
        assert carried[name].ok and carried[name].carried_s is not None and carried[name].duration_ms is None
        assert carried[name].every_s and carried[name].carried_s < carried[name].every_s
    # Every-poll sources ran both times; the carried ones' sections still fill the state ...
    assert carried["thread_pool_groups"].carried_s is None and carried["thread_pool_groups"].duration_ms
    assert second.state.variables == first.state.variables and len(second.state.waits) == 12
    # ... but their samples were stored once, when read.
    assert any(s.metric == "buffer_pool_pages" for s in first.samples)
    assert not any(s.metric == "buffer_pool_pages" for s in second.samples)


async def test_counter_reset_never_gives_negative_rates(mariadb_line, line_dsn):
    poller = poller_for(line_dsn)
    await poller.poll_once()
    await poller.poll_once()
    conn = mariadb_line.admin_connect()
    with conn.cursor() as cur:
        cur.execute("FLUSH THREAD_POOL_STATS")
        cur.execute("FLUSH THREAD_POOL_WAITS")
    conn.close()
    result = await poller.poll_once()
    await poller.close()
    rates = [s.value for s in result.samples if s.metric.endswith("_per_s") and s.value is not None]
    assert all(rate >= 0 for rate in rates)
    assert all(g.stall_reason is None for g in result.state.groups)


async def test_groups_beyond_pool_size_are_marked_retired(mariadb_line, line_dsn):
    poller = poller_for(line_dsn)
    with global_variables(mariadb_line, thread_pool_size=1):
        result = await poller.poll_once()
    await poller.close()
    retired = {g.group_id: g.retired for g in result.state.groups}
    assert retired == {0: False, 1: True}


@pytest.mark.slow
async def test_provoked_stall_is_detected_and_queued_connections_are_named(mariadb_line, line_dsn):
    poller = poller_for(line_dsn)
    await poller.poll_once()
    with (
        global_variables(mariadb_line, thread_pool_size=1, thread_pool_stall_limit=100),
        cpu_burst(mariadb_line, heavy=6, light=6, seconds=2.0),
    ):
        # Until a stall was detected and the queue listed, in the same poll or not: on a loaded
        # machine the first stalled poll can come after the queue it started with drained.
        observed = {"stall": False, "queue": False}

        def stall_and_queue_seen(r: PollResult) -> bool:
            if r.state is not None:
                observed["stall"] |= any(g.stalled for g in r.state.groups)
                observed["queue"] |= bool(r.state.queue)
            return observed["stall"] and observed["queue"]

        seen = await poll_until(poller, stall_and_queue_seen, timeout_s=20, every_s=0.25)
    await poller.close()
    assert all(r.info.status == "up" for r in seen), "the poller must keep working through a stall"
    stalled = [g for r in seen for g in r.state.groups if g.stalled]
    assert stalled, "a stall was provoked but never detected"
    assert {g.stall_reason for g in stalled} & {"stalls_counter", "no_dequeue"}
    queued = [q for r in seen for q in r.state.queue]
    assert queued, "connections waited in the queue but none was listed"
    assert {q.user for q in queued} == {"sbtest"}
    assert all(q.priority in ("high", "low") for q in queued)
    assert any(r.state.queued_connections for r in seen)


@pytest.mark.slow
async def test_large_stall_limit_stall_is_caught_by_the_poller_side_check(mariadb_line, line_dsn):
    """A long stall_limit delays the server's own stall handling; the no-dequeue check must fire."""
    poller = poller_for(line_dsn)
    await poller.poll_once()
    loops = calibrate_benchmark(mariadb_line, 4.0)
    with global_variables(mariadb_line, thread_pool_size=1, thread_pool_stall_limit=1500):
        # Four CPU-bound statements fill the group (1 + thread_pool_oversubscribe), and repeat
        # until the block ends: short ones queue behind them with no dequeue until the server's
        # timer declares a stall, again and again. The poller's check sees the queue before the
        # timer does only in part of each such wait; one burst of single statements (the check's
        # one chance) passed no poll through it in CI's live lane.
        conns = [mariadb_line.connect(SBTEST_USER) for _ in range(10)]
        heavy = f"SELECT BENCHMARK({loops}, MD5('poolscope'))"
        with running(conns, [heavy] * 4 + ["SELECT 1"] * 6, repeat=10_000, sandbox=mariadb_line):
            seen = await poll_until(
                poller,
                lambda r: r.state is not None and any(g.stall_reason == "no_dequeue" for g in r.state.groups),
                timeout_s=60,
                every_s=0.25,
            )
    await poller.close()
    reasons = {g.stall_reason for r in seen if r.state for g in r.state.groups}
    assert "no_dequeue" in reasons


async def test_idle_qps_leaves_out_poolscopes_own_statements(pool_off_monitor_dsn):
    # Each of the ~9 statements of a poll counts in Questions; an idle server must still read ~0.
    poller = poller_for(pool_off_monitor_dsn)
    results = []
    for _ in range(4):
        results.append(await poller.poll_once())
        await asyncio.sleep(0.5)  # a rate needs time between two polls: the behaviour measured
    await poller.close()
    qps = [r.state.throughput.qps for r in results[1:]]
    assert all(q is not None and q < 2.0 for q in qps), qps


async def test_after_a_lost_connection_the_processlist_form_is_chosen_afresh(mariadb_line, line_dsn):
    """The server that answers after a reconnect may be another (a failover, a restart with a
    storm of clients): the first polls take the form that is safe at any size again."""
    poller = poller_for(line_dsn)
    (collector,) = [c for c in poller.collectors if c.name == "processlist"]
    for _ in range(3):
        await poller.poll_once()
    assert collector.sql(poller.connection.server) == processlist.SHOW_SQL
    poller.connection.conn.close()  # the server drops the monitoring connection
    lost = await poller.poll_once()
    assert lost.info.status == "down"
    back = await poller.poll_once()
    await poller.close()
    assert back.info.status == "up"
    assert "information_schema.PROCESSLIST" in collector.sql(back.info.server)


@pytest.mark.parametrize("processlist_form", ["show", "information_schema"])
async def test_long_transactions_are_listed_and_named_short_ones_only_counted(
    mariadb_line, line_dsn, monkeypatch, processlist_form
):
    if processlist_form == "information_schema":
        # As on a server with more connections than SHOW FULL PROCESSLIST is read for.
        monkeypatch.setattr(processlist, "SHOW_MAX_CONNECTIONS", 0)
    poller = poller_for(line_dsn)
    # Before these connections exist; the second poll reads the connection count the
    # processlist picks its form by.
    for _ in range(2):
        await poller.poll_once()
    old, young = (
        mariadb_line.connect(SBTEST_USER, database="sbtest"),
        mariadb_line.connect(SBTEST_USER, database="sbtest"),
    )
    try:
        with old.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS trx_probe (id INT PRIMARY KEY, v INT)")
            cur.execute("REPLACE INTO trx_probe VALUES (1, 0), (2, 0)")
            cur.execute("BEGIN")
            cur.execute("UPDATE trx_probe SET v = v + 1 WHERE id = 1")
            old_id = old.thread_id()
        await asyncio.sleep(1.5)  # the behaviour: one transaction older than the other by > 1 s
        with young.cursor() as cur:
            # trx_started is a whole-second DATETIME: a transaction begun late in a second reads
            # up to 1 s older than it is. Begin just after the server's clock turns a second.
            cur.execute("SELECT MICROSECOND(NOW(6))")
            await asyncio.sleep((1_000_000 - cur.fetchone()[0]) / 1e6 + 0.02)
            cur.execute("BEGIN")
            cur.execute("UPDATE trx_probe SET v = v + 1 WHERE id = 2")
            young_id = young.thread_id()
        young_started = time.monotonic()
        result = await poller.poll_once()
        young_age_bound = time.monotonic() - young_started
    finally:
        old.close()
        young.close()
        await poller.close()
    trx = result.state.transactions
    assert trx.count >= 2 and trx.longest_age_s >= 1.5
    assert trx.listed_min_age_s == 1.0
    # Listed: open >= 1 s (or in lock wait), and named although the session is idle and new.
    assert all((t.age_s or 0) >= 1.0 or t.state == "LOCK WAIT" for t in trx.items)
    assert [(t.user, t.db) for t in trx.items if t.thread_id == old_id] == [(SBTEST_USER, "sbtest")]
    if young_age_bound < 0.9:  # a loaded machine can make the poll itself take a second
        assert young_id not in {t.thread_id for t in trx.items}, "a transaction younger than 1 s was listed"
    statuses = {c.name: c for c in result.state.collectors}
    if processlist_form == "show":
        # Every session, idle ones included, is named by the poll's own round trip.
        assert statuses["session_lookup"].duration_ms is None
        assert statuses["session_lookup"].note.startswith("on demand: everyone listed is already known")
    else:
        # Active sessions only: the idle one holding the old transaction is named (asserted above)
        # by an id lookup or, when this poll already knew it, without one. Which of the two happens
        # varies from run to run on MariaDB 10.11 (about 1 run in 3, with older pollers too; not
        # explained yet), so only the naming is asserted.
        assert statuses["session_lookup"].ok
