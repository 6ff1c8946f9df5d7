"""``python -m poolscope_bench``: run the parts against a private sandbox and print one report."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from poolscope.config import Settings
from poolscope.poller.target_poller import PollResult, TargetPoller
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_bench import holderscost, idlecost, overhead, polltime, storebench
from poolscope_bench.common import (
    BenchConfig,
    BenchContext,
    bench_workdir,
    catch_stop_signals,
    cpu_count,
    interpreter,
    progress,
)
from poolscope_bench.exporter import Exporter, ExporterError, exporter_version, find_exporter
from poolscope_bench.report import render
from poolscope_dev import sysbench
from poolscope_dev.sandbox import MONITOR_PASSWORD, MONITOR_USER, MariaDBSandbox, SandboxError

log = logging.getLogger(__name__)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_bench",
        description="Poolscope benchmark: monitoring overhead, poll time, store ingest and chart speed, "
        "all measured side by side in one run against a private loopback MariaDB sandbox.",
    )
    p.add_argument("--quick", action="store_true", help="much shorter runs (a smoke test, not a measurement)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--skip-exporter", action="store_true", help="skip part 2 (prometheus-mysqld-exporter)")
    p.add_argument(
        "--skip-sysbench", action="store_true", help="skip parts 1-3 (everything that runs sysbench)"
    )
    p.add_argument(
        "--control",
        action="store_true",
        help="also run an A/A control (B = no monitor either): the noise floor of the TPS ratios",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when a PASS/FAIL line says FAIL")
    g = p.add_argument_group("sizes (defaults: the full run; --quick shrinks them)")
    g.add_argument("--threads", type=int, help="sysbench threads for the TPS ratios (16)")
    g.add_argument("--run-seconds", type=int, help="seconds per sysbench run in the ratios (15)")
    g.add_argument("--pairs", type=int, help="A/B pairs per ratio, run in ABBA order (4)")
    g.add_argument("--warmup-seconds", type=int, help="unmeasured sysbench warm-up (10)")
    g.add_argument("--test", choices=sysbench.TESTS, help="sysbench test (oltp_read_write)")
    g.add_argument("--tables", type=int, help="sysbench tables (4)")
    g.add_argument("--table-size", type=int, help="rows per sysbench table (10000)")
    g.add_argument("--load-threads", type=int, help="sysbench threads while timing polls (100)")
    g.add_argument("--polls", type=int, help="polls per port under load (70; the verdict wants >= 60)")
    g.add_argument("--ingest-polls", type=int, help="polls written in the ingest part (1000)")
    g.add_argument("--store-groups", type=int, help="thread groups a realistic poll is widened to (8)")
    g.add_argument("--raw-hours", type=float, help="hours of raw samples in the 24 h chart store (6)")
    g.add_argument("--chart-queries", type=int, help="repetitions of each chart query (20)")
    g.add_argument("--workdir", type=Path, help="keep the sandbox and stores here instead of a temp dir")
    args = p.parse_args(argv)
    return args


def build_config(args: argparse.Namespace) -> BenchConfig:
    cfg = BenchConfig.quick_sizes() if args.quick else BenchConfig()
    overrides = {
        "threads": args.threads,
        "run_s": args.run_seconds,
        "pairs": args.pairs,
        "warmup_s": args.warmup_seconds,
        "test": args.test,
        "tables": args.tables,
        "table_size": args.table_size,
        "load_threads": args.load_threads,
        "polls": args.polls,
        "ingest_polls": args.ingest_polls,
        "store_groups": args.store_groups,
        "raw_hours": args.raw_hours,
        "chart_queries": args.chart_queries,
    }
    for key, value in overrides.items():
        if value is not None:
            setattr(cfg, key, value)
    cfg.sysbench = not args.skip_sysbench
    cfg.exporter = not args.skip_exporter
    cfg.strict = args.strict
    cfg.control = args.control
    for key in ("threads", "run_s", "pairs", "tables", "table_size", "load_threads", "polls"):
        if getattr(cfg, key) < 1:
            raise SystemExit(f"error: {key} must be >= 1")
    if cfg.warmup_s < 1:
        raise SystemExit("error: warmup must be >= 1 s")
    if not (1 <= cfg.ingest_polls <= 1_000_000 and 1 <= cfg.chart_queries <= 10_000):
        raise SystemExit("error: --ingest-polls must be 1..1e6 and --chart-queries 1..1e4")
    if not (1 <= cfg.store_groups <= 256 and 0 < cfg.raw_hours <= cfg.chart_hours):
        raise SystemExit("error: --store-groups must be 1..256 and --raw-hours in (0, 24]")
    return cfg


def _skipped(reason: str) -> dict[str, Any]:
    return {"skipped": reason}


async def capture_poll(ctx: BenchContext) -> PollResult:
    """A real poll of the sandbox (the third, so rates have a previous value)."""
    settings = ctx.settings(ctx.target("capture"))
    poller = TargetPoller(settings.targets[0], settings)
    try:
        result = await poller.poll_once()
        for _ in range(2):
            await asyncio.sleep(0.5)
            result = await poller.poll_once()
    finally:
        await poller.close()
    if result.info.status != "up":
        raise RuntimeError(f"cannot poll the sandbox: {result.info.reason}")
    return result


async def run_all(ctx: BenchContext, results: dict[str, Any], exporter_box: list[Exporter]) -> None:
    cfg = ctx.cfg
    idle_poll = await capture_poll(ctx)
    server = idle_poll.info.server
    results["meta"]["server"] = server.model_dump() if server else None

    loaded_poll: PollResult | None = None
    have_sysbench = sysbench.available()
    if not cfg.sysbench or not have_sysbench:
        reason = "--skip-sysbench" if not cfg.sysbench else "sysbench not installed"
        for key in ("overhead_poolscope", "overhead_exporter", "overhead_control", "poll_time", "idle_cost"):
            results[key] = _skipped(reason)
    else:
        target = ctx.sysbench_target
        progress(f"sysbench prepare: {cfg.tables} tables x {cfg.table_size} rows")
        await asyncio.to_thread(sysbench.prepare, target, cfg.tables, cfg.table_size)
        results["meta"]["warmup"] = await overhead.warmup(ctx)

        store_url = f"sqlite+aiosqlite:///{ctx.workdir}/poolscope.db"
        await asyncio.to_thread(upgrade_to_head, store_url)
        defaults = Settings()
        store = SqlStore(
            store_url,
            raw_retention_s=defaults.raw_retention_hours * 3600,
            rollup_retention_s=defaults.rollup_retention_days * 86400,
            rollup_step_s=defaults.rollup_step_s,
        )
        try:
            results["idle_cost"] = {"poolscope": await idlecost.poolscope_idle_cost(ctx, store)}
            progress(f"part 1: Poolscope overhead, {cfg.pairs} pairs x 2 runs x {cfg.run_s} s")
            results["overhead_poolscope"] = await overhead.ratio_pairs(
                ctx, lambda: overhead.PoolscopeMonitor(ctx, store), "poolscope"
            )
        finally:
            await store.close()

        binary = find_exporter()
        if not cfg.exporter:
            results["overhead_exporter"] = _skipped("--skip-exporter")
        elif binary is None:
            results["overhead_exporter"] = _skipped("prometheus-mysqld-exporter not installed")
        else:
            exporter = Exporter(
                binary,
                ctx.workdir,
                host=ctx.sandbox.host,
                port=ctx.sandbox.port,
                user=MONITOR_USER,
                password=MONITOR_PASSWORD,
            )
            exporter_box.append(exporter)
            try:
                await asyncio.to_thread(exporter.start)
                results["idle_cost"]["exporter"] = await idlecost.exporter_idle_cost(ctx, exporter)
                progress(f"part 2: exporter overhead, {cfg.pairs} pairs x 2 runs x {cfg.run_s} s")
                part = await overhead.ratio_pairs(
                    ctx, lambda: overhead.ExporterMonitor(ctx, exporter), "exporter"
                )
                part["exporter_version"] = exporter_version(binary)
                part["exporter_port_kind"] = "port"
                results["overhead_exporter"] = part
            except ExporterError as exc:
                results["overhead_exporter"] = _skipped(f"exporter failed: {exc}")
            finally:
                exporter.stop()

        if cfg.control:
            progress(f"A/A control: {cfg.pairs} pairs x 2 runs x {cfg.run_s} s, no monitor in either")
            results["overhead_control"] = await overhead.ratio_pairs(ctx, overhead.NullMonitor, "control")
        else:
            results["overhead_control"] = _skipped("not requested (--control)")

        progress("part 3: poll wall time, extra_port vs normal port")
        results["poll_time"], loaded_poll = await polltime.poll_time(ctx)

    poll = storebench.RealisticPoll(loaded_poll or idle_poll, cfg.store_groups)
    results.update(await storebench.run(ctx, poll))
    results["store_ingest"]["captured_under_load"] = loaded_poll is not None
    results["holders_cost"] = await holderscost.holders_cost(ctx)


def _verdicts(results: dict[str, Any]) -> list[bool]:
    out = []
    for key in ("overhead_poolscope", "poll_time"):
        part = results.get(key) or {}
        if "pass" in part:
            out.append(bool(part["pass"]))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = build_config(args)
    logging.basicConfig(
        level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )

    restore_signals = catch_stop_signals()
    workdir, own_dir = bench_workdir(args.workdir, "poolscope-bench-")
    results: dict[str, Any] = {
        "meta": {
            "started_at": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "host_cpus": cpu_count(),
            "python": interpreter(),
            "quick": cfg.quick,
            "config": {k: v for k, v in vars(cfg).items()},
        }
    }
    exporter_box: list[Exporter] = []
    sandbox = MariaDBSandbox(
        workdir / "mariadb",
        thread_handling="pool-of-threads",
        thread_pool_size=cpu_count(),
        exact_stats=True,
    )
    code = 0
    t0 = time.monotonic()
    try:
        progress(f"starting MariaDB sandbox in {workdir} (thread_pool_size={cpu_count()})")
        sandbox.start()
        results["meta"]["sandbox"] = {
            "port": sandbox.port,
            "extra_port": sandbox.extra_port,
            "thread_pool_size": sandbox.thread_pool_size,
            "exact_stats": sandbox.exact_stats,
        }
        ctx = BenchContext(cfg=cfg, sandbox=sandbox, workdir=workdir)
        asyncio.run(run_all(ctx, results, exporter_box))
    except KeyboardInterrupt:
        print("interrupted: stopping the sandbox and exporter", file=sys.stderr)
        code = 130
    except (SandboxError, sysbench.SysbenchError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    finally:
        for exporter in exporter_box:
            exporter.stop()
        sandbox.stop()
        if own_dir:
            sandbox.destroy()
            shutil.rmtree(workdir, ignore_errors=True)
        restore_signals()
    results["meta"]["elapsed_s"] = round(time.monotonic() - t0, 1)
    if code == 0:
        print(render(results))
        if cfg.strict and not all(_verdicts(results)):
            code = 1
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(_jsonable(results), indent=2) + "\n")
    return code


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    with contextlib.suppress(TypeError):
        json.dumps(value)
        return value
    return str(value)
