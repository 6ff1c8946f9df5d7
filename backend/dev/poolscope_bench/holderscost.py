"""Part 6: what naming who holds the pool costs a poll, idle, under queueing and during a stall.

Two TargetPollers poll the same server in turns, the order flipping every round: `without` runs every
collector but the holders' own sources (Collector.on_pressure: lock waits, metadata locks,
statement digests, the thread and transaction lookups: the poll as it was before them), `with` is
the product. Idle, the holders' sources are skipped by both, so the two must cost the same. Under
queueing (CPU-bound statements outnumber the workers, stall limit 60 s) and during a stall (stall
limit 100 ms) `with` reads them. Per poll: the poller thread's CPU and the wall time.

Also: the cost of the per-poll bookkeeping on a stalled poll (held-time counters and the flight
recorder), and the flight recorder's memory: what the stall left in it, and a recorder filled for
120 s with its worst case per second (8 groups, each with 10 holders and 20 queued requests shown).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pymysql

from poolscope.analysis.flight_recorder import FlightRecorder
from poolscope.analysis.held_time import HeldTime
from poolscope.poller.collectors import all_collectors
from poolscope.poller.target_poller import TargetPoller
from poolscope.schemas import GroupHolders, Holder, QueuedConnection, TargetState
from poolscope_bench.common import BenchContext, progress
from poolscope_bench.stats import summarize
from poolscope_dev.sandbox import ADMIN_USER, SBTEST_USER

GAP_S = 0.25


@contextlib.contextmanager
def _cpu_load(
    ctx: BenchContext, statements: int, seconds: float, stall_limit_ms: int, pingers: int = 0
) -> Iterator[None]:
    """`statements` connections repeating a CPU-bound SELECT of ~`seconds` and `pingers` repeating
    SELECT 1 until the block ends (then killed), with thread_pool_stall_limit set for the block."""
    sandbox = ctx.sandbox
    admin = sandbox.admin_connect()
    with admin.cursor() as cur:
        cur.execute("SELECT @@GLOBAL.thread_pool_stall_limit")
        (old_limit,) = cur.fetchone()
        cur.execute("SET GLOBAL thread_pool_stall_limit = %s", (stall_limit_ms,))
    probe = sandbox.connect(SBTEST_USER, extra=True)
    with probe.cursor() as cur:
        started = time.perf_counter()
        cur.execute("SELECT BENCHMARK(500000, MD5('poolscope'))")
        loops = max(int(500000 * seconds / max(time.perf_counter() - started, 1e-3)), 100000)
    probe.close()
    stop = threading.Event()
    conns = [sandbox.connect(SBTEST_USER) for _ in range(statements + pingers)]

    def run(conn: pymysql.connections.Connection[Any], i: int) -> None:
        sql = f"SELECT BENCHMARK({loops}, MD5('holders{i}'))" if i < statements else "SELECT 1"
        with contextlib.suppress(Exception), conn.cursor() as cur:
            while not stop.is_set():
                cur.execute(sql)

    threads = [threading.Thread(target=run, args=(c, i), daemon=True) for i, c in enumerate(conns)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1.0)  # the queue forms
        yield
    finally:
        stop.set()
        killer = sandbox.connect(ADMIN_USER, extra=True)
        with killer.cursor() as cur:
            for conn in conns:
                with contextlib.suppress(Exception):
                    cur.execute(f"KILL QUERY {int(conn.thread_id())}")
        killer.close()
        for thread in threads:
            thread.join(timeout=30)
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
        with admin.cursor() as cur:
            cur.execute("SET GLOBAL thread_pool_stall_limit = %s", (old_limit,))
        admin.close()


async def _lanes(ctx: BenchContext, pollers: dict[str, TargetPoller], polls: int) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {k: [] for k in pollers}
    wall: dict[str, list[float]] = {k: [] for k in pollers}
    pressured = {k: 0 for k in pollers}
    stalled = {k: 0 for k in pollers}
    order = list(pollers)
    for n in range(polls):
        for key in order if n % 2 == 0 else order[::-1]:
            c0, w0 = time.thread_time(), time.perf_counter()
            result = await pollers[key].poll_once()
            wall[key].append((time.perf_counter() - w0) * 1000)
            cpu[key].append((time.thread_time() - c0) * 1000)
            state = result.state
            if state is not None and state.holders:
                pressured[key] += 1
                stalled[key] += any(g.stalled for g in state.holders)
            await asyncio.sleep(GAP_S)
    return {
        key: {
            "cpu_ms": summarize(cpu[key]),
            "wall_ms": summarize(wall[key]),
            "polls_with_holders": pressured[key],
            "polls_stalled": stalled[key],
        }
        for key in pollers
    }


def _bookkeeping_us(state: TargetState | None, repeat: int = 500) -> float | None:
    """µs per poll for the held-time counters and the flight recorder, on a pressured poll's state."""
    if state is None or not state.holders:
        return None
    held = HeldTime(1.0)
    recorder = FlightRecorder()
    t0 = time.perf_counter()
    for i in range(repeat):
        held.count(1000.0 + i, state.holders, state.queue)
        recorder.record(1000.0 + i, state.holders, state.queue)
    return round((time.perf_counter() - t0) / repeat * 1e6, 1)


def _worst_recorder() -> dict[str, Any]:
    """A recorder filled for 120 s with 8 groups a second, each at the per-group caps."""
    groups = [
        GroupHolders(
            group_id=g,
            stalled=True,
            queue_length=40,
            holders=[
                Holder(
                    connection_id=1000 * g + h,
                    user="application_user",
                    host="app-server-17.example.internal:51234",
                    command="Query",
                    state="Sending data",
                    time_s=float(h),
                    digest=f"{g:08x}{h:08x}",
                    digest_text="SELECT o.id, o.total FROM orders o JOIN customers c ON c.id = o.customer_id"
                    " WHERE c.region = ? AND o.created_at > ? ORDER BY o.created_at DESC LIMIT ?",
                    waits_on="row lock",
                )
                for h in range(12)
            ],
        )
        for g in range(8)
    ]
    queue = [
        QueuedConnection(
            group_id=g,
            position=q,
            priority="low",
            connection_id=50000 + 100 * g + q,
            queueing_time_ms=float(q * 10),
            user="application_user",
            host="app-server-17.example.internal:51234",
            last_sql=f"UPDATE stock SET qty = qty - {q} WHERE sku = 'x{q}'",
        )
        for g in range(8)
        for q in range(25)
    ]
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    recorder = FlightRecorder()
    for i in range(120):
        recorder.record(1000.0 + i, groups, queue)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    allocated = sum(s.size_diff for s in after.compare_to(before, "filename"))
    entries = recorder.entries()
    return {
        "seconds_kept": len(entries),
        "payload_bytes": recorder.bytes,
        "max_bytes": recorder.max_bytes,
        "python_bytes": allocated,
    }


async def holders_cost(ctx: BenchContext) -> dict[str, Any]:
    polls = max(ctx.cfg.idle_polls, 10)
    settings = ctx.settings(ctx.target("holders"))
    without = [c for c in all_collectors() if not c.on_pressure]
    pollers = {
        "without": TargetPoller(settings.targets[0], settings, collectors=without),
        "with": TargetPoller(settings.targets[0], settings),
    }
    results: dict[str, Any] = {"polls_per_lane": polls}
    try:
        for poller in pollers.values():
            await poller.poll_once()
        progress(f"part 6: holders cost, idle: {polls} polls per lane")
        results["idle"] = await _lanes(ctx, pollers, polls)
        size = ctx.sandbox.thread_pool_size or 2
        progress(f"part 6: holders cost, queueing: {polls} polls per lane")
        with _cpu_load(ctx, statements=3 * size, seconds=0.3, stall_limit_ms=60000):
            results["queue"] = await _lanes(ctx, pollers, polls)
        progress(f"part 6: holders cost, stall: {polls} polls per lane")
        # Long CPU-bound statements and short ones behind them, the stall limit at 100 ms (as e2e's stall).
        with _cpu_load(ctx, statements=4 * size, seconds=3.0, stall_limit_ms=100, pingers=4 * size):
            results["stall"] = await _lanes(ctx, pollers, polls)
            results["bookkeeping_us_per_poll"] = _bookkeeping_us((await pollers["with"].poll_once()).state)
        recorder = pollers["with"].memory.recorder
        results["recorder_after_run"] = {
            "seconds_kept": len(recorder.entries()),
            "payload_bytes": recorder.bytes,
        }
        results["recorder_worst_case"] = _worst_recorder()
    finally:
        for poller in pollers.values():
            await poller.close()
    return results
