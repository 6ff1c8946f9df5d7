"""CPU per monitoring operation on an idle server: a comparison the machine's noise cannot blur.

TPS ratios on a shared 2-core machine swing by several percent between runs; CPU seconds charged
to a process do not. For one Poolscope poll (poll_once + write_poll) and one exporter scrape this
measures the CPU the MariaDB server spent (minus its idle background, measured just before), and
the CPU of the monitoring process itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from poolscope.poller.target_poller import TargetPoller
from poolscope.store.sql import SqlStore
from poolscope_bench.common import BenchContext, progress
from poolscope_bench.exporter import Exporter
from poolscope_bench.stats import process_cpu_s, summarize

GAP_S = 0.2


async def _measure(
    ctx: BenchContext, op: Callable[[], Awaitable[None]], helper_pid: int | None = None
) -> dict[str, Any]:
    cfg = ctx.cfg
    server_pid = ctx.sandbox.pid
    assert server_pid is not None
    # The server's own background CPU (purge, timers) over a quiet window, to subtract.
    b0, bt0 = process_cpu_s(server_pid), time.monotonic()
    await asyncio.sleep(cfg.idle_baseline_s)
    b1, bt1 = process_cpu_s(server_pid), time.monotonic()
    background = (b1 - b0) / (bt1 - bt0) if b0 is not None and b1 is not None else 0.0

    s0 = process_cpu_s(server_pid)
    h0 = process_cpu_s(helper_pid) if helper_pid else None
    c0, t0 = time.process_time(), time.monotonic()
    walls: list[float] = []
    for _ in range(cfg.idle_ops):
        started = time.perf_counter()
        await op()
        walls.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(GAP_S)
    elapsed = time.monotonic() - t0
    client_ms = (time.process_time() - c0) * 1000
    s1 = process_cpu_s(server_pid)
    h1 = process_cpu_s(helper_pid) if helper_pid else None
    n = cfg.idle_ops
    out: dict[str, Any] = {
        "ops": n,
        "wall_ms": summarize(walls),
        "server_background_cpu_pct": round(background * 100, 2),
        "server_cpu_ms_per_op": (
            round(max((s1 - s0) - background * elapsed, 0.0) * 1000 / n, 3)
            if s0 is not None and s1 is not None
            else None
        ),
        "client_cpu_ms_per_op": round(client_ms / n, 3),
    }
    if h0 is not None and h1 is not None:
        out["helper_cpu_ms_per_op"] = round((h1 - h0) * 1000 / n, 3)
    return out


async def poolscope_idle_cost(ctx: BenchContext, store: SqlStore) -> dict[str, Any]:
    progress(f"idle cost: {ctx.cfg.idle_ops} Poolscope polls (poll + store write)")
    settings = ctx.settings(ctx.target("idle-cost"))
    poller = TargetPoller(settings.targets[0], settings)
    try:
        for _ in range(2):  # connect, take counter baselines and create the series first
            warm = await poller.poll_once()
            await store.write_poll(warm.info, warm.state, warm.samples, ts=time.time())

        async def op() -> None:
            result = await poller.poll_once()
            await store.write_poll(
                result.info, result.state, result.samples, ts=result.info.last_poll_at or time.time()
            )

        out = await _measure(ctx, op)
    finally:
        await poller.close()
    connection = poller.info.connection
    out["port_kind"] = connection.port_kind if connection else None
    return out


async def exporter_idle_cost(ctx: BenchContext, exporter: Exporter) -> dict[str, Any]:
    progress(f"idle cost: {ctx.cfg.idle_ops} exporter scrapes")
    async with httpx.AsyncClient(timeout=10.0) as client:
        await client.get(exporter.url)

        async def op() -> None:
            res = await client.get(exporter.url)
            res.raise_for_status()

        out = await _measure(ctx, op, exporter.pid)
    out["port_kind"] = "port"
    return out
