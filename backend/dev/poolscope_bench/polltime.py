"""Part 3: poll wall time on extra_port vs the normal port, idle and under a 100-thread sysbench load.

Two TargetPollers poll the same server: one with extra_port=None (auto: moves to @@extra_port,
the product default) and one with extra_port=0 (never: stays on the normal port, where the
monitoring connection waits in the thread pool queue it measures:
docs/decisions/0001-poll-outside-the-pool.md). Their polls alternate in the same load window, the
order flipping every round, so both see the same load.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import time
from typing import Any

import aiomysql
from pymysql.constants import CLIENT

from poolscope.poller.target_poller import PollResult, TargetPoller
from poolscope_bench.common import (
    EXTRA_PORT_P95_TARGET_MS,
    MIN_POLLS_FOR_VERDICT,
    BenchContext,
    progress,
)
from poolscope_bench.overhead import SysbenchProcess
from poolscope_bench.stats import summarize, thread_run_delay_ms
from poolscope_dev.sandbox import MONITOR_PASSWORD, MONITOR_USER

RAMP_S = 3.0


class _Lane:
    def __init__(self, key: str, poller: TargetPoller) -> None:
        self.key = key
        self.poller = poller
        self.walls_ms: list[float] = []
        self.cpu_ms: list[float] = []
        self.run_delay_ms: list[float] = []
        self.failed = 0
        self.last: PollResult | None = None
        self.queue_lengths: list[int] = []
        self.threads_running: list[int] = []
        self.collector_ms: dict[str, list[float]] = {}

    def reset(self) -> None:
        self.walls_ms.clear()
        self.cpu_ms.clear()
        self.run_delay_ms.clear()
        self.failed = 0
        self.queue_lengths.clear()
        self.threads_running.clear()
        self.collector_ms.clear()

    async def poll(self) -> None:
        cpu0 = time.process_time()
        delay0 = thread_run_delay_ms()
        started = time.perf_counter()
        result = await self.poller.poll_once()
        wall_ms = (time.perf_counter() - started) * 1000
        # The bench process runs nothing else meanwhile: this is the poller's own CPU.
        cpu_ms = (time.process_time() - cpu0) * 1000
        delay1 = thread_run_delay_ms()
        if result.info.status != "up":
            self.failed += 1
            return
        self.walls_ms.append(wall_ms)
        self.cpu_ms.append(cpu_ms)
        if delay0 is not None and delay1 is not None:
            self.run_delay_ms.append(delay1 - delay0)
        self.last = result
        for status in result.info.collectors:
            if status.duration_ms is not None:
                self.collector_ms.setdefault(status.name, []).append(status.duration_ms)
        summary = result.info.summary
        if summary.queue_length is not None:
            self.queue_lengths.append(summary.queue_length)
        if summary.threads_running is not None:
            self.threads_running.append(summary.threads_running)

    def report(self) -> dict[str, Any]:
        connection = self.poller.info.connection
        out: dict[str, Any] = {
            "port_kind": connection.port_kind if connection else None,
            "port": connection.port if connection else None,
            "failed_polls": self.failed,
            **summarize(self.walls_ms),
            "client_cpu_ms": summarize(self.cpu_ms),
            "run_delay_ms": summarize(self.run_delay_ms),
        }
        # Per statement of the batch (the first one also carries the round trip), slowest first.
        medians = {name: statistics.median(values) for name, values in self.collector_ms.items()}
        out["collector_p50_ms"] = {
            name: round(ms, 3) for name, ms in sorted(medians.items(), key=lambda kv: -kv[1])
        }
        if self.queue_lengths:
            out["queue_length_mean"] = round(statistics.fmean(self.queue_lengths), 2)
        if self.threads_running:
            out["threads_running_mean"] = round(statistics.fmean(self.threads_running), 1)
        return out


class _Probe:
    """A measurement on a connection of its own, taken between the lanes' polls in the same load."""

    def __init__(self, key: str, ctx: BenchContext, port: int) -> None:
        self.key = key
        self.ctx = ctx
        self.port = port
        self.conn: aiomysql.Connection | None = None
        self.values_ms: list[float] = []
        self.failed = 0

    async def open(self) -> None:
        self.conn = await aiomysql.connect(
            host=self.ctx.sandbox.host,
            port=self.port,
            user=MONITOR_USER,
            password=MONITOR_PASSWORD,
            autocommit=True,
            connect_timeout=10,
            client_flag=CLIENT.MULTI_STATEMENTS,
        )

    async def _run(self, conn: aiomysql.Connection) -> float:
        raise NotImplementedError

    async def measure(self) -> None:
        if self.conn is None:
            return
        try:
            self.values_ms.append(await asyncio.wait_for(self._run(self.conn), timeout=10))
        except (aiomysql.Error, TimeoutError):
            self.failed += 1

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def report(self) -> dict[str, Any]:
        return {"port": self.port, "failed": self.failed, **summarize(self.values_ms)}


class _Ping(_Probe):
    """`SELECT 1`: the round-trip floor a poll on that port cannot beat."""

    async def _run(self, conn: aiomysql.Connection) -> float:
        started = time.perf_counter()
        async with conn.cursor() as cur:
            await cur.execute("SELECT 1")
            await cur.fetchall()
        return (time.perf_counter() - started) * 1000


CLOCK_SQL = "SELECT UNIX_TIMESTAMP(NOW(6))"


class _ServerClock(_Probe):
    """The poll's every-second statements, timed by the server's own clock.

    `SELECT NOW(6)` before and after them in the same multi-statement gives the server's elapsed
    time for that work, so the report can say how much of a poll's wall time is the server's
    (its CPU, stretched by the load's threads it shares cores with) and how much the poller's.
    """

    def __init__(self, key: str, ctx: BenchContext, port: int, poller: TargetPoller) -> None:
        super().__init__(key, ctx, port)
        self.poller = poller
        self.statements: list[str] = []

    async def _run(self, conn: aiomysql.Connection) -> float:
        server = self.poller.connection.server
        assert server is not None
        # As the poller sends them now: a source may change its statement with the server's size.
        self.statements = [
            c.sql(server) for c in self.poller.collectors if c.every_s == 0 and c.applies(server) is None
        ]
        async with conn.cursor() as cur:
            await cur.execute(";\n".join([CLOCK_SQL, *self.statements, CLOCK_SQL]))
            first = last = await cur.fetchall()
            while await cur.nextset():
                last = await cur.fetchall()
        return (float(last[0][0]) - float(first[0][0])) * 1000

    def report(self) -> dict[str, Any]:
        return {"statements": len(self.statements), **super().report()}


async def _interleave(
    lanes: list[_Lane],
    probes: list[_Probe],
    polls: int,
    gap_s: float,
    deadline: float,
    load: Any = None,
) -> None:
    """Alternate the lanes' polls (order flipped every round) until each has `polls` or time is up."""
    for round_no in range(polls * 3):  # bounded even if polls keep failing
        if all(len(lane.walls_ms) >= polls for lane in lanes) or time.monotonic() >= deadline:
            break
        if load is not None and not load.running:
            break
        flip = round_no % 2 == 1
        for lane in reversed(lanes) if flip else lanes:
            await lane.poll()
            await asyncio.sleep(gap_s)
        for probe in reversed(probes) if flip else probes:
            await probe.measure()


async def poll_time(ctx: BenchContext) -> tuple[dict[str, Any], PollResult | None]:
    """Returns the report and the last loaded poll on extra_port (a realistic poll for part 4)."""
    cfg = ctx.cfg
    settings = ctx.settings(ctx.target("extra", extra_port=None), ctx.target("port", extra_port=0))
    lanes = [_Lane(t.name, TargetPoller(t, settings)) for t in settings.targets]
    pings = [_Ping("extra", ctx, ctx.sandbox.extra_port), _Ping("port", ctx, ctx.sandbox.port)]
    probes: list[_Probe] = [*pings]
    clock: _ServerClock | None = None
    load: SysbenchProcess | None = None
    try:
        for lane in lanes:  # connect, discover, take counter baselines
            await lane.poll()
            lane.reset()
        for ping in pings:
            await ping.open()
        if lanes[0].poller.connection.server is not None:
            clock = _ServerClock("clock", ctx, ctx.sandbox.extra_port, lanes[0].poller)
            probes.append(clock)
            await clock.open()
        progress(f"poll time: {cfg.idle_polls} idle polls per port")
        await _interleave(lanes, probes, cfg.idle_polls, cfg.poll_gap_s, time.monotonic() + 120)
        idle = {lane.key: lane.report() for lane in lanes}
        idle_ping = {ping.key: ping.report() for ping in pings}
        idle_clock = clock.report() if clock else None
        for lane in lanes:
            lane.reset()
        for probe in probes:
            probe.values_ms.clear()
        # Long enough for every poll with margin; stopped as soon as both lanes have their polls.
        load_s = int(RAMP_S + cfg.polls * 1.2 + 30)
        progress(
            f"poll time: {cfg.load_threads}-thread sysbench load, {cfg.polls} polls per port (≤ {load_s} s)"
        )
        load = SysbenchProcess(ctx, cfg.load_threads, load_s)
        await load.start()
        await asyncio.sleep(RAMP_S)
        started = time.monotonic()
        await _interleave(lanes, probes, cfg.polls, cfg.poll_gap_s, started + load_s - RAMP_S - 2, load)
        window_s = time.monotonic() - started
        load_alive = load.running
        load_average = os.getloadavg()[0]
        loaded = {lane.key: lane.report() for lane in lanes}
        loaded_ping = {ping.key: ping.report() for ping in pings}
        loaded_clock = clock.report() if clock else None
    finally:
        if load is not None:
            await load.kill()
        for probe in probes:
            probe.close()
        for lane in lanes:
            with contextlib.suppress(Exception):
                await lane.poller.close()
    extra = loaded["extra"]
    n = int(extra.get("n", 0))
    p95 = extra.get("p95")
    verdict_ok = (
        extra.get("port_kind") == "extra_port" and p95 is not None and p95 <= EXTRA_PORT_P95_TARGET_MS
    )
    report = {
        "load_threads": cfg.load_threads,
        "load_window_s": round(window_s, 1),
        "load_ran_throughout": load_alive,
        "idle": idle,
        "loaded": loaded,
        "select1_idle": idle_ping,
        "select1_loaded": loaded_ping,
        "server_clock_idle": idle_clock,
        "server_clock_loaded": loaded_clock,
        "host_load_average": round(load_average, 1),
        "target_p95_ms": EXTRA_PORT_P95_TARGET_MS,
        "enough_polls": n >= MIN_POLLS_FOR_VERDICT,
        "pass": verdict_ok,
    }
    return report, lanes[0].last
