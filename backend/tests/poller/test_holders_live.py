"""Who holds the pool, against the real MariaDB: the group rule, holders of a stalled group, a row-lock chain."""

from __future__ import annotations

import asyncio

import pytest

from poolscope.analysis.held_time import MAX_TIME, SUMMED, rank
from poolscope.analysis.holders import mariadb_group
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_dev.sandbox import SBTEST_USER
from tests.poller.helpers import (
    calibrate_benchmark,
    connections_in_group,
    global_variables,
    poll_until,
    poller_for,
    running,
)
from tests.waiting import wait_for

HOLDER = "poolscope-holder"
WAITER = "poolscope-waiter"


def test_queued_connections_sit_in_the_group_the_rule_gives(mariadb_line):
    """THREAD_POOL_QUEUES names each queued connection's group: it is id % thread_pool_size.

    The sandbox's thread_pool_size (2) is kept: a larger one would leave retired groups listed for
    the rest of the session."""
    loops = calibrate_benchmark(mariadb_line, 2.0)
    with global_variables(mariadb_line, thread_pool_stall_limit=60000):
        conns = [mariadb_line.connect(SBTEST_USER) for _ in range(12)]
        sql = f"SELECT BENCHMARK({loops}, MD5('x')) /* {HOLDER} */"
        with running(conns, [sql] * len(conns)):
            probe = mariadb_line.connect("poolscope_monitor", extra=True)
            try:
                rows = wait_for(
                    lambda: _queue_rows(probe),
                    30,
                    "nothing queued in both groups",
                    until=lambda r: {g for g, _ in r} == {0, 1},
                )
            finally:
                probe.close()
    for group_id, connection_id in rows:
        assert group_id == mariadb_group(connection_id, 2), rows


async def _ranked(tmp_path, results):
    """The polls stored as the scheduler stores them, then ranked from the store over their range."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    await asyncio.to_thread(upgrade_to_head, url)  # Alembic runs its own event loop
    store = SqlStore(url, raw_retention_s=3600, rollup_retention_s=86400)
    try:
        for result in results:
            ts = result.info.last_poll_at
            await store.write_poll(result.info, result.state, result.samples, ts=ts)
        start, end = results[0].info.last_poll_at - 1, results[-1].info.last_poll_at + 1
        sums = await store.totals("t", SUMMED, start, end)
        maxima = await store.totals("t", [MAX_TIME.name], start, end, agg="max")
    finally:
        await store.close()
    return rank(sums, maxima, "stalled", 20)


def _queue_rows(conn) -> list[tuple[int, int]]:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT GROUP_ID, CONNECTION_ID FROM information_schema.THREAD_POOL_QUEUES WHERE CONNECTION_ID IS NOT NULL"
        )
        return [(int(g), int(c)) for g, c in cur.fetchall()]


@pytest.mark.slow
async def test_holders_of_a_stalled_group_are_the_statements_that_hold_it(mariadb, monitor_dsn, tmp_path):
    """Group 1 held by CPU-bound statements of one shape while short statements of another queue:
    the holders are the first shape, the waiters are only queued, and over the range the digest
    that held the stalled group longest is the first shape's."""
    loops = calibrate_benchmark(mariadb, 3.0)
    poller = poller_for(monitor_dsn)
    try:
        await poller.poll_once()
        # As many holders as a group may run at once (1 + thread_pool_oversubscribe, 3 by default;
        # the pool's too_many_threads()): waiters are dequeued only while the timer has the group
        # marked stalled, so the stall lasts from one poll to the next. With three holders a fourth
        # worker served the waiters, the stall lasted a timer tick, and in CI's live lane no poll of
        # 115 saw it. make bench part 6 holds its stall the same way.
        with global_variables(mariadb, thread_pool_stall_limit=100):
            holders = connections_in_group(mariadb, group=1, size=2, count=4)
            waiters = connections_in_group(mariadb, group=1, size=2, count=4)
            holder_ids = {c.thread_id() for c in holders}
            waiter_ids = {c.thread_id() for c in waiters}
            heavy = f"SELECT BENCHMARK({loops}, MD5('x')) /* {HOLDER} */"
            light = f"SELECT 1 + 1 /* {WAITER} */"
            with (
                running(holders, [heavy] * 4, repeat=60, sandbox=mariadb),
                running(waiters, [light] * 4, repeat=100_000, sandbox=mariadb),
            ):
                seen = await poll_until(
                    poller,
                    lambda r: (
                        r.state is not None
                        and any(h.group_id == 1 and h.stalled and h.holders for h in r.state.holders)
                    ),
                    timeout_s=60,
                )
                # A few more polls of the stall, so held and queued seconds add up.
                for _ in range(6):
                    await asyncio.sleep(0.5)
                    seen.append(await poller.poll_once())
    finally:
        await poller.close()
    ranked = await _ranked(tmp_path, seen)
    top = ranked[0]
    assert top.text == "SELECT BENCHMARK(?, MD5(?))", ranked
    assert top.stalled_s > 0 and top.stall_episodes >= 1 and top.groups == ["1"]
    assert top.clients == [f"{SBTEST_USER}@127.0.0.1"]
    waited = [d for d in ranked if d.text == "SELECT ? + ?"]
    assert all(d.stalled_s < top.stalled_s for d in waited)
    state = next(
        r.state for r in seen if r.state is not None and any(h.stalled and h.holders for h in r.state.holders)
    )
    assert state is not None and state.holders_scope == "group"
    group = next(h for h in state.holders if h.group_id == 1)
    assert group.stalled
    ids = {h.connection_id for h in group.holders}
    assert ids & holder_ids, f"no holder among {group.holders}"
    heavy_holders = [h for h in group.holders if h.connection_id in holder_ids]
    assert all(HOLDER not in (h.digest_text or "") for h in heavy_holders)  # comments are not the shape
    assert {h.digest_text for h in heavy_holders} == {"SELECT BENCHMARK(?, MD5(?))"}
    assert all(h.digest_source == "poolscope" and h.info and HOLDER in h.info for h in heavy_holders)
    # Holders are read for a group only when it queued or stalled (derive.py's pressured groups):
    # group 0 is listed only if a poll saw it so (on a saturated machine a stray request of the
    # sandbox's own may queue there for a moment at a 100 ms stall limit).
    group0_pressed = any(
        g.group_id == 0 and (g.queue_length or g.stalled) for r in seen if r.state for g in r.state.groups
    )
    assert group0_pressed or all(h.group_id != 0 for h in state.holders)
    # Every listed holder is in the group the rule gives.
    assert all(mariadb_group(h.connection_id, 2) == 1 for h in group.holders)
    # A queued request is not executing: never a holder (a heavy one may queue behind the others).
    # The queue and the processlist are read one after the other in a poll: a request dequeued in
    # between shows in both, but only as a statement that has just started.
    both = [r.state for r in seen if r.state is not None and r.state.queue and r.state.holders]
    assert both
    for polled in both:
        queued = {q.connection_id for q in polled.queue}
        held = {h.connection_id: h.time_s or 0.0 for g in polled.holders for h in g.holders}
        assert all(held[c] < 1.0 for c in queued & held.keys()), (queued, held)
        assert queued <= waiter_ids | holder_ids


@pytest.mark.slow
async def test_a_row_lock_chain_names_the_blocker_and_its_statement(mariadb, monitor_dsn):
    setup = mariadb.connect(SBTEST_USER, database="sbtest")
    with setup.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS holders_rowlock (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        cur.execute("REPLACE INTO holders_rowlock VALUES (1, 0)")
    setup.close()
    loops = calibrate_benchmark(mariadb, 2.0)
    poller = poller_for(monitor_dsn)
    try:
        await poller.poll_once()
        with global_variables(mariadb, thread_pool_size=1, thread_pool_stall_limit=60000):
            blocker = mariadb.connect(SBTEST_USER, database="sbtest")
            waiter = mariadb.connect(SBTEST_USER, database="sbtest")
            cpu = [mariadb.connect(SBTEST_USER) for _ in range(4)]
            blocker_sql = "UPDATE holders_rowlock SET v = v + 1 WHERE id = 1 AND SLEEP(12) = 0"
            waiter_sql = "UPDATE holders_rowlock SET v = v + 2 WHERE id = 1"
            heavy = f"SELECT BENCHMARK({loops}, MD5('x')) /* {HOLDER} */"
            with (
                running([blocker, waiter], [blocker_sql, waiter_sql], sandbox=mariadb),
                running(cpu, [heavy] * 4, repeat=30, sandbox=mariadb),
            ):
                seen = await poll_until(
                    poller,
                    lambda r: (
                        r.state is not None
                        and any(
                            h.waits_on == "row lock" and h.blockers
                            for g in r.state.holders
                            for h in g.holders
                        )
                    ),
                    timeout_s=30,
                )
                blocker_id, waiter_id = blocker.thread_id(), waiter.thread_id()
    finally:
        await poller.close()
    state = seen[-1].state
    assert state is not None
    waiting = next(h for g in state.holders for h in g.holders if h.waits_on == "row lock")
    assert waiting.connection_id == waiter_id
    (named,) = waiting.blockers
    assert named.kind == "row_lock" and named.connection_id == blocker_id
    assert named.statement and "SLEEP(12)" in named.statement
    assert named.user == SBTEST_USER and named.trx_id
