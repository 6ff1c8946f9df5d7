"""Parts 1 and 2: sysbench TPS with a monitor scraping every second ÷ TPS without, in ABBA pairs.

A = sysbench alone; B = sysbench while a monitor runs: Poolscope's real Scheduler (a TargetPoller
polling every 1 s, each poll written to a SqlStore on a temp SQLite file), or
prometheus-mysqld-exporter scraped over HTTP every 1 s. Each pair's ratio is B/A; consecutive
pairs run as A B, B A so slow drift of the machine cancels, and the median of the ratios is the
number quoted (run-to-run noise is ±10 %, so single runs say nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import subprocess
import time
from typing import Any, Protocol

import httpx

from poolscope.config import Settings, TargetConfig
from poolscope.poller.scheduler import Scheduler
from poolscope.poller.target_poller import PollResult, TargetPoller
from poolscope.store.sql import SqlStore
from poolscope_bench.common import OVERHEAD_TARGET, BenchContext, progress
from poolscope_bench.exporter import Exporter
from poolscope_bench.stats import abba_orders, median_ratio, summarize
from poolscope_dev import sysbench

SYSBENCH_GRACE_S = 60  # beyond --time before a run counts as hung


class SysbenchProcess:
    """One sysbench run as an asyncio subprocess, killed if the bench is interrupted."""

    def __init__(self, ctx: BenchContext, threads: int, time_s: int) -> None:
        self.ctx = ctx
        self.threads = threads
        self.time_s = time_s
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        cfg = self.ctx.cfg
        cmd = sysbench.command(
            self.ctx.sysbench_target,
            cfg.test,
            "run",
            tables=cfg.tables,
            table_size=cfg.table_size,
            threads=self.threads,
            time_s=self.time_s,
        )
        self.proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def wait(self) -> sysbench.SysbenchResult:
        assert self.proc is not None
        try:
            out, _ = await asyncio.wait_for(self.proc.communicate(), timeout=self.time_s + SYSBENCH_GRACE_S)
        except TimeoutError:
            raise sysbench.SysbenchError(
                f"sysbench did not finish within {self.time_s + SYSBENCH_GRACE_S} s"
            ) from None
        finally:
            await self.kill()
        text = out.decode(errors="replace")
        if self.proc.returncode != 0:
            tail = "\n".join(text.strip().splitlines()[-10:])
            raise sysbench.SysbenchError(f"sysbench exited with {self.proc.returncode}:\n{tail}")
        return sysbench.parse_output(text, self.ctx.cfg.test, self.threads, self.time_s)

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), timeout=10)


async def run_sysbench(ctx: BenchContext, threads: int, time_s: int) -> sysbench.SysbenchResult:
    run = SysbenchProcess(ctx, threads, time_s)
    await run.start()
    return await run.wait()


class Monitor(Protocol):
    label: str

    async def start(self) -> None: ...

    async def stop(self) -> dict[str, Any]: ...


class TimedPoller(TargetPoller):
    """A TargetPoller that remembers each poll's wall time (what the scheduler waits for)."""

    def __init__(self, config: TargetConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        self.walls_ms: list[float] = []
        self.down = 0
        self.recording = False

    def start_recording(self) -> None:
        self.walls_ms.clear()
        self.down = 0
        self.recording = True

    async def poll_once(self) -> PollResult:
        started = time.perf_counter()
        result = await super().poll_once()
        if self.recording:
            self.walls_ms.append((time.perf_counter() - started) * 1000)
            if result.info.status == "down":
                self.down += 1
        return result


class PoolscopeMonitor:
    """The product's own loop: Scheduler + TargetPoller (extra_port auto) + SqlStore."""

    label = "Poolscope"

    def __init__(self, ctx: BenchContext, store: SqlStore) -> None:
        self.ctx = ctx
        self.store = store
        self.poller: TimedPoller | None = None
        self.scheduler: Scheduler | None = None
        self._cpu0 = 0.0
        self._t0 = 0.0

    async def start(self) -> None:
        settings = self.ctx.settings(self.ctx.target("bench"))
        self.poller = TimedPoller(settings.targets[0], settings)
        # Connect, take the counter baselines and create the store's series before the measured
        # window, as a running product would have long done.
        first = await self.poller.poll_once()
        await self.store.write_poll(first.info, first.state, first.samples, ts=time.time())
        self.poller.start_recording()
        self.scheduler = Scheduler(settings, self.store, {self.poller.name: self.poller})
        self._cpu0 = time.process_time()
        self._t0 = time.monotonic()
        self.scheduler.start()

    async def stop(self) -> dict[str, Any]:
        assert self.scheduler is not None and self.poller is not None
        await self.scheduler.stop()
        cpu_ms = (time.process_time() - self._cpu0) * 1000
        polls = len(self.poller.walls_ms)
        connection = self.poller.info.connection
        return {
            "polls": polls,
            "failed_polls": self.poller.down,
            "window_s": round(time.monotonic() - self._t0, 2),
            "poll_ms": summarize(self.poller.walls_ms),
            "port_kind": connection.port_kind if connection else None,
            # The bench process does nothing else meanwhile: this is poll + parse + store write.
            "client_cpu_ms_per_poll": round(cpu_ms / polls, 3) if polls else None,
        }


class NullMonitor:
    """The A/A control: B runs exactly like A. Its ratios show the noise floor of this machine."""

    label = "nothing (A/A control)"

    async def start(self) -> None:
        return None

    async def stop(self) -> dict[str, Any]:
        return {}


class ExporterMonitor:
    """An HTTP scrape of prometheus-mysqld-exporter every interval, as Prometheus would do."""

    label = "mysqld_exporter"

    def __init__(self, ctx: BenchContext, exporter: Exporter) -> None:
        self.ctx = ctx
        self.exporter = exporter
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self.walls_ms: list[float] = []
        self.sizes: list[int] = []
        self.errors = 0
        self._exp_cpu0: float | None = None
        self._cpu0 = 0.0

    async def start(self) -> None:
        self._client = httpx.AsyncClient(timeout=5.0)
        self._exp_cpu0 = self.exporter.cpu_s()
        self._cpu0 = time.process_time()
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        assert self._client is not None
        interval = self.ctx.cfg.poll_interval_s
        next_at = time.monotonic()
        # Bounded by count as well as by stop(): a run never lasts longer than this.
        max_scrapes = int((self.ctx.cfg.run_s + 2 * 60) / interval) + 1
        for _ in range(max_scrapes):
            if self._stop.is_set():
                break
            started = time.perf_counter()
            try:
                res = await self._client.get(self.exporter.url)
                body = res.content
                if res.status_code != 200:
                    self.errors += 1
                else:
                    self.sizes.append(len(body))
            except httpx.HTTPError:
                self.errors += 1
            self.walls_ms.append((time.perf_counter() - started) * 1000)
            next_at += interval
            if next_at < time.monotonic():
                next_at = time.monotonic() + interval
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=max(next_at - time.monotonic(), 0.0))

    async def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._task is not None:
            await self._task
        if self._client is not None:
            await self._client.aclose()
        client_cpu_ms = (time.process_time() - self._cpu0) * 1000
        exp_cpu1 = self.exporter.cpu_s()
        scrapes = len(self.walls_ms)
        exporter_cpu_ms = (
            (exp_cpu1 - self._exp_cpu0) * 1000
            if exp_cpu1 is not None and self._exp_cpu0 is not None
            else None
        )
        return {
            "scrapes": scrapes,
            "failed_scrapes": self.errors,
            "scrape_ms": summarize(self.walls_ms),
            "bytes_per_scrape": round(sum(self.sizes) / len(self.sizes)) if self.sizes else None,
            "exporter_cpu_ms_per_scrape": (
                round(exporter_cpu_ms / scrapes, 3) if scrapes and exporter_cpu_ms is not None else None
            ),
            "client_cpu_ms_per_scrape": round(client_cpu_ms / scrapes, 3) if scrapes else None,
        }


async def warmup(ctx: BenchContext) -> dict[str, Any]:
    cfg = ctx.cfg
    progress(f"sysbench warm-up: {cfg.warmup_s} s, {cfg.threads} threads (not measured)")
    res = await run_sysbench(ctx, cfg.threads, cfg.warmup_s)
    return {"time_s": cfg.warmup_s, "tps": round(res.tps, 2)}


async def ratio_pairs(ctx: BenchContext, make_monitor: Any, what: str) -> dict[str, Any]:
    """Run cfg.pairs A/B pairs in ABBA order; B runs with a fresh monitor from make_monitor()."""
    cfg = ctx.cfg
    pairs: list[dict[str, Any]] = []
    monitor_stats: list[dict[str, Any]] = []
    loads: list[float] = []  # the host's 1-min load average as each run starts
    for index, order in enumerate(abba_orders(cfg.pairs), start=1):
        tps: dict[str, float] = {}
        latency: dict[str, float | None] = {}
        pair_monitor: dict[str, Any] = {}
        for kind in order:
            loads.append(os.getloadavg()[0])
            if kind == "A":
                res = await run_sysbench(ctx, cfg.threads, cfg.run_s)
            else:
                monitor: Monitor = make_monitor()
                await monitor.start()
                try:
                    res = await run_sysbench(ctx, cfg.threads, cfg.run_s)
                finally:
                    pair_monitor = await monitor.stop()
                monitor_stats.append(pair_monitor)
            tps[kind] = res.tps
            latency[kind] = res.latency_p95_ms
            progress(f"{what} pair {index}/{cfg.pairs} run {kind}: {res.tps:.1f} tps")
        ratio = tps["B"] / tps["A"] if tps["A"] > 0 else 0.0
        pairs.append(
            {
                "order": order,
                "a_tps": round(tps["A"], 2),
                "b_tps": round(tps["B"], 2),
                "ratio": round(ratio, 4),
                "a_p95_latency_ms": latency["A"],
                "b_p95_latency_ms": latency["B"],
                "monitor": pair_monitor,
            }
        )
    ratios = [p["ratio"] for p in pairs]
    median = median_ratio(ratios)
    a_runs = [p["a_tps"] for p in pairs]
    a_cv = statistics.pstdev(a_runs) / statistics.fmean(a_runs) * 100 if len(a_runs) > 1 else None
    return {
        "test": cfg.test,
        "threads": cfg.threads,
        "run_s": cfg.run_s,
        "pairs": pairs,
        "median_ratio": median,
        "min_ratio": min(ratios) if ratios else None,
        "max_ratio": max(ratios) if ratios else None,
        "target": OVERHEAD_TARGET,
        "pass": median is not None and median >= OVERHEAD_TARGET,
        "monitor": _merge_monitor_stats(monitor_stats),
        # Noise context: how much the same configuration (A) moved, and how busy the host was.
        "a_tps_min": min(a_runs) if a_runs else None,
        "a_tps_max": max(a_runs) if a_runs else None,
        "a_tps_cv_pct": round(a_cv, 1) if a_cv is not None else None,
        "host_load_min": round(min(loads), 1) if loads else None,
        "host_load_max": round(max(loads), 1) if loads else None,
    }


def _merge_monitor_stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over all B runs (counts summed, per-run medians kept as a list)."""
    if not runs:
        return {}
    merged: dict[str, Any] = {}
    for key in ("polls", "failed_polls", "scrapes", "failed_scrapes"):
        if key in runs[0]:
            merged[key] = sum(int(r.get(key) or 0) for r in runs)
    for key in ("client_cpu_ms_per_poll", "client_cpu_ms_per_scrape", "exporter_cpu_ms_per_scrape"):
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            merged[key] = round(sum(values) / len(values), 3)
    for key in ("poll_ms", "scrape_ms"):
        if key in runs[0]:
            merged[key + "_p50_per_run"] = [r[key].get("p50") for r in runs]
            merged[key + "_max"] = max((r[key].get("max") or 0.0) for r in runs)
    for key in ("port_kind", "bytes_per_scrape"):
        if key in runs[0]:
            merged[key] = runs[-1][key]
    return merged
