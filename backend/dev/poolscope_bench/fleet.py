"""``python -m poolscope_bench fleet``: one `poolscope serve` watching N targets on several sandboxes.

For each size N the bench writes a config of N targets (distinct names, the same monitoring
user) spread round-robin over a few private MariaDB sandboxes, starts `poolscope serve` in its
default settings on a free loopback port with a SQLite store in a temp dir, waits until every
target was polled, warms up, and then over a measuring window records:

- the CPU (utime + stime) and RSS of the whole `poolscope serve` process tree (a supervisor
  forks its children: walked by parent pid in /proc), and separately the sandboxes' CPU;
- target-polls done in the window, counted in the store (one target_up sample per poll)
  -> CPU per target-poll;
- poll staleness (now - last_poll_at of every target in GET /api/targets), sampled every second;
- GET /api/targets latency, sequential requests every 0.5 s (and an overview endpoint if the
  API has one).

Beside it: mysqld_exporter's CPU per scrape of one sandbox (idlecost.exporter_idle_cost).
Every process is stopped at the end, on an error and on Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

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
from poolscope_bench.fleetprobe import ApiProbe, child_roles, count_polls, log_problems
from poolscope_bench.fleetreport import render
from poolscope_bench.idlecost import exporter_idle_cost
from poolscope_bench.proctree import cpu_by_role, tree_pids, tree_usage
from poolscope_bench.stats import process_cpu_s
from poolscope_dev import supervisor
from poolscope_dev.mariadbd import install_datadir
from poolscope_dev.sandbox import MONITOR_PASSWORD, MONITOR_USER, MariaDBSandbox, SandboxError, free_port

DEFAULT_SIZES = (10, 100, 300, 1000)
PASSWORD_ENV = "POOLSCOPE_FLEET_MONITOR_PASSWORD"
STORE_GRACE_S = 3.0  # after the window, for samples a batching writer still holds


@dataclass
class FleetConfig:
    sizes: tuple[int, ...] = DEFAULT_SIZES
    seconds: float = 30.0
    warmup_s: float = 5.0
    sandboxes: int = 4
    exporter_scrapes: int = 30  # 0: skip the mysqld_exporter comparison
    poll_interval_s: float = 1.0  # poolscope's default; only used for the expected poll count

    def first_poll_timeout_s(self, n: int) -> float:
        # Bounded so a Poolscope that cannot keep up still gets measured within the time budget.
        return min(20.0 + 0.025 * n, 45.0)


def parse_args(argv: list[str] | None) -> tuple[FleetConfig, argparse.Namespace]:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_bench fleet",
        description="One `poolscope serve` (default settings) polling N targets spread over several "
        "MariaDB sandboxes: CPU per target-poll, staleness, API latency and RSS per size.",
    )
    p.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="target counts (10,100,300,1000)"
    )
    p.add_argument("--seconds", type=float, default=30.0, help="measuring window per size (30)")
    p.add_argument(
        "--warmup", type=float, default=5.0, help="unmeasured seconds after every target was polled (5)"
    )
    p.add_argument(
        "--sandboxes", type=int, default=4, help="MariaDB sandboxes the targets are spread over (4)"
    )
    p.add_argument(
        "--exporter-scrapes", type=int, default=30, help="mysqld_exporter scrapes to measure (30; 0 skips)"
    )
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON to FILE")
    p.add_argument("--workdir", type=Path, help="keep sandboxes and stores here instead of a temp dir")
    args = p.parse_args(argv)
    try:
        sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    except ValueError:
        raise SystemExit(
            f"error: --sizes must be a comma-separated list of integers, not {args.sizes!r}"
        ) from None
    if not sizes or not all(1 <= n <= 5000 for n in sizes):
        raise SystemExit("error: --sizes must list target counts in 1..5000")
    if not (1 <= args.seconds <= 600 and 0 <= args.warmup <= 900):
        # A steady state needs the store older than recommend_window_s (300 s by default): before
        # that every recommender evaluation re-reads its whole window.
        raise SystemExit("error: --seconds must be in 1..600 and --warmup in 0..900")
    if not (1 <= args.sandboxes <= 16 and 0 <= args.exporter_scrapes <= 1000):
        raise SystemExit("error: --sandboxes must be in 1..16 and --exporter-scrapes in 0..1000")
    cfg = FleetConfig(
        sizes=sizes,
        seconds=args.seconds,
        warmup_s=args.warmup,
        sandboxes=args.sandboxes,
        exporter_scrapes=args.exporter_scrapes,
    )
    return cfg, args


def fleet_sandbox(base: Path, targets: int) -> MariaDBSandbox:
    """A sandbox with room for `targets` monitoring connections (each target holds one, on extra_port)."""
    return MariaDBSandbox(
        base,
        thread_pool_size=cpu_count(),
        exact_stats=True,
        max_connections=targets + 100,
        extra_max_connections=targets + 50,
    )


def start_sandboxes(sandboxes: list[MariaDBSandbox]) -> None:
    """Install one datadir and copy it for the others (mariadb-install-db is the slow part), then start all."""
    first = sandboxes[0]
    if not (first.datadir / "mysql").is_dir():
        progress("fleet: installing a MariaDB datadir")
        first.tmpdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        install_datadir(first, 120)
    for sb in sandboxes[1:]:
        if not (sb.datadir / "mysql").is_dir():
            shutil.rmtree(sb.datadir, ignore_errors=True)
            shutil.copytree(first.datadir, sb.datadir)  # a cold copy of a server that never ran
    for i, sb in enumerate(sandboxes, start=1):
        progress(
            f"fleet: starting MariaDB sandbox {i}/{len(sandboxes)} (max_connections {sb.max_connections})"
        )
        sb.start()


def poolscope_binary() -> str:
    candidate = Path(sys.executable).parent / "poolscope"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("poolscope")
    if not found:
        raise RuntimeError("no `poolscope` command next to this Python or on PATH: run `make install`")
    return found


def write_config(path: Path, n: int, sandboxes: list[MariaDBSandbox], port: int, store: Path) -> None:
    """N targets round-robin over the sandboxes; the password comes from PASSWORD_ENV, not the file."""
    lines = [
        f'store_url = "sqlite+aiosqlite:///{store}"',
        'listen_host = "127.0.0.1"',
        f"listen_port = {port}",
    ]
    width = len(str(n))
    for i in range(n):
        sb = sandboxes[i % len(sandboxes)]
        lines += [
            "",
            "[[targets]]",
            f'name = "fleet-{i + 1:0{width}d}"',
            f'dsn = "mysql://{MONITOR_USER}@{sb.host}:{sb.port}/"',
            f'password_env = "{PASSWORD_ENV}"',
        ]
    path.write_text("\n".join(lines) + "\n")


def _sandboxes_cpu_s(sandboxes: list[MariaDBSandbox]) -> float:
    return sum(process_cpu_s(sb.pid) or 0.0 for sb in sandboxes if sb.pid is not None)


def measure_size(n: int, cfg: FleetConfig, sandboxes: list[MariaDBSandbox], workdir: Path) -> dict[str, Any]:
    """Start `poolscope serve` with n targets, measure one window, stop it; every process is gone after."""
    run_dir = workdir / f"run-{n}"
    # A kept --workdir must not hand this run the last run's store (its latest rows looked like
    # polls already done) or log (appended to).
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    store = run_dir / "fleet.db"
    port = free_port()
    config = run_dir / "poolscope.toml"
    write_config(config, n, sandboxes, port, store)
    env = {k: v for k, v in os.environ.items() if not k.startswith("POOLSCOPE_")}
    env[PASSWORD_ENV] = MONITOR_PASSWORD
    base = f"http://127.0.0.1:{port}"
    progress(f"fleet {n}: starting poolscope serve on 127.0.0.1:{port} ({len(sandboxes)} sandboxes)")
    started_at = time.time()
    child = supervisor.start(
        "poolscope serve",
        [poolscope_binary(), "--config", str(config), "serve"],
        log=run_dir / "serve.log",
        env=env,
    )
    probe = ApiProbe(base, started_at, store, n)
    seen: set[int] = set()
    try:
        child.wait_ready(
            "/api/health", lambda: httpx.get(f"{base}/api/health", timeout=2).is_success or None, 60
        )

        def all_polled() -> float | None:
            rows, _ = probe.targets()
            polled = sum(1 for row in rows if row.get("last_poll_at"))
            return time.time() - started_at if polled == n else None

        # The bound counts from the start, so a Poolscope that is slow to come up is not waited on twice.
        left_s = max(cfg.first_poll_timeout_s(n) - (time.time() - started_at), 5.0)
        try:
            first_poll_s: float | None = child.wait_ready(
                "a poll of every target", all_polled, left_s, every_s=0.5
            )
        except TimeoutError:
            first_poll_s = None  # measured anyway: the table shows how many never came up
        polled = f"after {first_poll_s:.1f} s" if first_poll_s is not None else "NOT within the bound"
        progress(f"fleet {n}: every target polled {polled}; warm-up {cfg.warmup_s:g} s")
        probe.find_overview()
        time.sleep(cfg.warmup_s)

        progress(f"fleet {n}: measuring {cfg.seconds:g} s")
        u0, m0, t0, w0 = tree_usage(child.pid), _sandboxes_cpu_s(sandboxes), time.monotonic(), time.time()
        api = probe.sample(t0 + cfg.seconds)
        u1, m1, t1, w1 = tree_usage(child.pid), _sandboxes_cpu_s(sandboxes), time.monotonic(), time.time()
        if not child.running():
            raise RuntimeError(
                f"poolscope serve exited during the window:\n{supervisor.tail(run_dir / 'serve.log')}"
            )
        seen.update(u0.pids + u1.pids)
        time.sleep(STORE_GRACE_S)
        polls, down_polls, polled_targets = count_polls(store, w0, w1)
    finally:
        probe.close()
        seen.update(tree_pids(child.pid))
        left = child.stop()
        # A child that left the process group (setsid) is not stopped with it: stop it by pid,
        # if the pid still runs this config (not a new process that reused the number).
        strays = [p for p in sorted(seen - set(left)) if str(config) in supervisor.pid_cmdline(p)]
        left += [pid for pid in strays if not supervisor.stop_pid(pid, grace_s=10)]
    window = t1 - t0
    cpu_s = u1.cpu_s - u0.cpu_s
    # The API process answers the bench's own requests too (/api/targets and the overview, each
    # every 2 s): shown apart so the pollers' cost per poll is seen without them.
    roles = {
        role: round(cpu / window, 3)
        for role, cpu in cpu_by_role(u0, u1, child_roles(run_dir / "serve.log")).items()
    }
    poller_s = roles.get("poller", 0.0) * window
    return {
        "targets": n,
        "window_s": round(window, 2),
        "first_poll_s": round(first_poll_s, 1) if first_poll_s is not None else None,
        "processes": len(u1.pids),
        "cpu_s": round(cpu_s, 3),
        "cpu_cores": round(cpu_s / window, 3),
        "polls": polls,
        "polls_expected": round(n * window / cfg.poll_interval_s),
        "targets_polled": polled_targets,
        "cpu_ms_per_poll": round(cpu_s * 1000 / polls, 3) if polls else None,
        "cpu_cores_by_role": roles,
        "poller_cpu_ms_per_poll": round(poller_s * 1000 / polls, 3) if polls and "poller" in roles else None,
        "down_polls": down_polls,
        "rss_mb": round(u1.rss_bytes / 2**20, 1),
        "mariadb_cpu_cores": round((m1 - m0) / window, 3),
        "api": api,
        "serve_log": log_problems(run_dir / "serve.log"),
        "pids_seen": sorted(seen),
        "left_running": left,
    }


def measure_exporter(cfg: FleetConfig, sandbox: MariaDBSandbox, workdir: Path) -> dict[str, Any]:
    """mysqld_exporter's own CPU (and the server's) per scrape of one idle sandbox."""
    binary = find_exporter()
    if cfg.exporter_scrapes == 0:
        return {"skipped": "--exporter-scrapes 0"}
    if binary is None:
        return {"skipped": "prometheus-mysqld-exporter not installed"}
    exporter = Exporter(
        binary, workdir, host=sandbox.host, port=sandbox.port, user=MONITOR_USER, password=MONITOR_PASSWORD
    )
    ctx = BenchContext(
        cfg=BenchConfig(idle_ops=cfg.exporter_scrapes, idle_baseline_s=3.0), sandbox=sandbox, workdir=workdir
    )
    try:
        exporter.start()
        out = asyncio.run(exporter_idle_cost(ctx, exporter))
    except ExporterError as exc:
        return {"skipped": f"exporter failed: {exc}"}
    finally:
        exporter.stop()
    out["version"] = exporter_version(binary)
    return out


def run_fleet(cfg: FleetConfig, sandboxes: list[MariaDBSandbox], workdir: Path) -> dict[str, Any]:
    """Every size in order against running sandboxes; the exporter figure first, on the first sandbox."""
    results: dict[str, Any] = {"exporter": measure_exporter(cfg, sandboxes[0], workdir), "runs": []}
    for n in cfg.sizes:
        results["runs"].append(measure_size(n, cfg, sandboxes, workdir))
    return results


def main(argv: list[str] | None = None) -> int:
    cfg, args = parse_args(argv)

    restore_signals = catch_stop_signals()
    workdir, own_dir = bench_workdir(args.workdir, "poolscope-fleet-")
    per_sandbox = math.ceil(max(cfg.sizes) / cfg.sandboxes)
    sandboxes = [fleet_sandbox(workdir / f"mariadb-{i + 1}", per_sandbox) for i in range(cfg.sandboxes)]
    meta: dict[str, Any] = {
        "started_at": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "host_cpus": cpu_count(),
        "python": interpreter(),  # `poolscope serve` runs on this venv's too
        "load_average_before": os.getloadavg(),
        "config": {"sizes": list(cfg.sizes), "seconds": cfg.seconds, "warmup_s": cfg.warmup_s},
    }
    code, results = 0, None
    t0 = time.monotonic()
    try:
        start_sandboxes(sandboxes)
        meta["sandbox_pids"] = [sb.pid for sb in sandboxes]
        results = run_fleet(cfg, sandboxes, workdir)
    except KeyboardInterrupt:
        print("interrupted: stopping poolscope, the exporter and the sandboxes", file=sys.stderr)
        code = 130
    except (SandboxError, RuntimeError, TimeoutError, supervisor.ProcessExited, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    finally:
        for sb in sandboxes:
            if own_dir:
                sb.destroy()
            else:
                sb.stop()
        if own_dir:
            shutil.rmtree(workdir, ignore_errors=True)
        restore_signals()
    meta["elapsed_s"] = round(time.monotonic() - t0, 1)
    meta["load_average_after"] = os.getloadavg()
    if results is None:
        return code
    results["meta"] = meta
    print(render(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if any(run["left_running"] for run in results["runs"]):
        print("error: processes of poolscope serve were left running", file=sys.stderr)
        return 1
    return code
