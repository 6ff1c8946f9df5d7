"""Record the per-second series around a change on a real server, for the verdict's tests
(backend/tests/fixtures/verdict/, poolscope/actions/verdict.py).

A private MariaDB sandbox with the thread pool, sysbench oltp_read_only at a fixed rate (an
open-loop load: the offered QPS does not follow the server's latency) or at a fixed number of
threads, Poolscope's own poller every second, and half-way through a change: a variable set
(`--set thread_pool_size=4`, or `--set thread_pool_size=4@80` at second 80) and/or the load
changed (`--then-threads N`, `--then-rate R`); `--long N` adds N connections running long
CPU-bound statements, which hold a pool thread past the stall limit. What the verdict reads (QPS, threads connected and
running, queued requests, mean queue wait, stalls per second summed over the groups) is written
one row per second, with the instants of the changes and the command line that made it:

    python -m poolscope_dev.record_change --name improvement --pool-size 1 --threads 16 --rate 40 \\
        --set thread_pool_size=4 --seconds 120 --out backend/tests/fixtures/verdict/improvement.json

`--demo-act` records the opening act of `make demo` instead (demochanges.py: its load, and its
changes at their instants for the default guard window, set here with SET GLOBAL).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from poolscope.config import Settings, TargetConfig
from poolscope.poller.target_poller import TargetPoller
from poolscope_dev import demochanges, supervisor, sysbench
from poolscope_dev.demoload import DemoLoad
from poolscope_dev.loadgen import LoadGenerator
from poolscope_dev.sandbox import MONITOR_USER, SBTEST_DB, SBTEST_USER, MariaDBSandbox

# What actions/verdict.py reads, summed over label sets (groups) at each poll.
RECORDED = (
    "qps",
    "threads_connected",
    "threads_running",
    "tp_queued_connections",
    "tp_queue_wait_avg_ms",
    "tp_group_stalls_per_s",
)


def load(sb: MariaDBSandbox, threads: int, rate: int, seconds: int) -> subprocess.Popen[bytes]:
    target = sysbench.SysbenchTarget.from_sandbox(sb)
    extra = (f"--rate={rate}",) if rate else ()
    cmd = sysbench.command(target, "oltp_read_only", "run", threads=threads, time_s=seconds, extra_args=extra)
    return supervisor.start("sysbench", cmd, stdout=subprocess.DEVNULL, die_with_starter=True).proc


def parse_set(assignment: str, default_second: int) -> tuple[str, str, int]:
    """NAME=VALUE or NAME=VALUE@SECOND: the variable, its value, the second it is set at."""
    name, sep, rest = assignment.partition("=")
    value, at, second = rest.partition("@")
    if not sep or not name or not value or (at and not second.isdigit()):
        raise SystemExit(f"--set {assignment!r}: expected NAME=VALUE[@SECOND]")
    return name, value, int(second) if at else default_second


async def record(args: argparse.Namespace) -> dict[str, Any]:
    half = args.seconds // 2
    sets = [parse_set(s, half) for s in args.set]
    with tempfile.TemporaryDirectory(prefix="poolscope-record-") as tmp:
        sb = MariaDBSandbox(Path(tmp), thread_pool_size=args.pool_size, stall_limit_ms=args.stall_limit)
        sb.start()
        loads: list[subprocess.Popen[bytes]] = []
        try:
            sysbench.prepare(sysbench.SysbenchTarget.from_sandbox(sb))
            settings = Settings(targets=[TargetConfig(name="recorded", dsn=sb.dsn(MONITOR_USER))])
            poller = TargetPoller(settings.targets[0], settings)
            loads.append(load(sb, args.threads, args.rate, args.seconds + args.warmup + 5))
            long_load = None
            if args.long:
                # Long CPU-bound statements that hold a pool thread past the stall limit: what
                # makes short statements queue, and what the stall limit and the pool size act on.
                long_load = LoadGenerator(
                    sb.dsn(SBTEST_USER, database=SBTEST_DB),
                    "stall",
                    args.seconds + args.warmup + 5,
                    args.long,
                    stall_seconds=args.long_seconds,
                    stall_pingers=0,
                    progress_every_s=3600,
                )
                long_task = asyncio.create_task(long_load.run())
            # Warm-up: connections made, caches filled, the poller's counters primed.
            for _ in range(args.warmup):
                await poller.poll_once()
                await asyncio.sleep(1.0)
            rows: list[list[Any]] = []
            changes: list[dict[str, Any]] = []
            started = time.time()
            for second in range(args.seconds):
                await asyncio.sleep(max(0.0, started + second + 1 - time.time()))
                for name, value, at in sets:
                    if at == second:
                        set_global(sb, name, value)
                        changes.append({"ts": round(time.time(), 3), "set": f"{name}={value}"})
                if second == half and (args.then_threads or args.then_rate):
                    changes.append({"ts": round(time.time(), 3), "load": load_change(args)})
                    loads.append(more_load(sb, args))
                rows.append(await poll_row(poller))
            await poller.close()
            if long_load is not None:
                long_load.stop()
                await long_task
        finally:
            for proc in loads:
                proc.terminate()
                proc.wait(timeout=30)
            sb.destroy()
    load_text = (
        f"sysbench oltp_read_only, {args.threads} threads"
        + (f", --rate={args.rate}" if args.rate else "")
        + (f"; {args.long} connections running {args.long_seconds} s statements" if args.long else "")
    )
    return recording_of(args, load_text, args.pool_size, changes, rows)


def recording_of(
    args: argparse.Namespace,
    load_text: str,
    pool_size: int,
    changes: list[dict[str, Any]],
    rows: list[list[Any]],
) -> dict[str, Any]:
    """What a recording file holds: the run's rows, its changes, and how it was made."""
    return {
        "name": args.name,
        "description": args.description,
        "command": "python -m poolscope_dev.record_change " + shlex.join(sys.argv[1:]),
        "recorded": {
            "server": "MariaDB (Debian 10.11) sandbox, 2 CPUs shared with other work",
            "load": load_text,
            "pool_size": pool_size,
            "stall_limit_ms": args.stall_limit,
        },
        "changes": changes,
        "metrics": list(RECORDED),
        "seconds": rows,
    }


async def poll_row(poller: TargetPoller) -> list[Any]:
    """One poll: its time, and each recorded metric summed over its label sets."""
    result = await poller.poll_once()
    totals: dict[str, float] = {}
    for sample in result.samples:
        if sample.metric in RECORDED and sample.value is not None:
            totals[sample.metric] = round(totals.get(sample.metric, 0.0) + sample.value, 4)
    return [round(result.info.last_poll_at or time.time(), 3), totals]


class SetGlobal:
    """The act's hands in a recording: SET GLOBAL at once, each change's instant noted."""

    def __init__(self, sb: MariaDBSandbox) -> None:
        self.sb = sb
        self.changes: list[dict[str, Any]] = []

    async def ready(self) -> float:
        return demochanges.DEFAULT_WINDOW_S

    async def apply(self, step: demochanges.Step) -> None:
        await asyncio.to_thread(set_global, self.sb, step.variable, step.value)
        self.changes.append({"ts": round(time.time(), 3), "set": f"{step.variable}={step.value}"})

    async def close(self) -> None:
        pass


async def record_act(args: argparse.Namespace) -> dict[str, Any]:
    """The demo's opening act on a sandbox of its own, polled every second until the window
    after its second change is over."""
    act = demochanges.ACT
    window = demochanges.DEFAULT_WINDOW_S
    seconds = int(act.seconds(window) + 5)
    with tempfile.TemporaryDirectory(prefix="poolscope-record-") as tmp:
        sb = MariaDBSandbox(Path(tmp), thread_pool_size=act.pool_size, stall_limit_ms=args.stall_limit)
        sb.start()
        try:
            settings = Settings(targets=[TargetConfig(name="recorded", dsn=sb.dsn(MONITOR_USER))])
            poller = TargetPoller(settings.targets[0], settings)
            await poller.poll_once()  # the counters primed
            hands = SetGlobal(sb)
            load = DemoLoad(
                sb.dsn(SBTEST_USER, database=SBTEST_DB),
                (seconds + 600) / 3600,
                act=act,
                hands=hands,
            )
            task = asyncio.create_task(load.run())
            rows: list[list[Any]] = []
            started = time.time()
            for second in range(seconds + 600):  # the sysbench prepare comes first
                await asyncio.sleep(max(0.0, started + second + 1 - time.time()))
                rows.append(await poll_row(poller))
                if len(hands.changes) == 2 and rows[-1][0] > hands.changes[1]["ts"] + window + 2:
                    break
                if task.done():
                    break
            await poller.close()
            load.stop()
            await task
        finally:
            sb.destroy()
    return recording_of(
        args, f"make demo's opening act (demochanges.py): {act}", act.pool_size, hands.changes, rows
    )


def load_change(args: argparse.Namespace) -> str:
    parts = []
    if args.then_threads:
        parts.append(f"threads {args.threads} -> {args.then_threads}")
    if args.then_rate:
        parts.append(f"rate {args.rate} -> {args.then_rate}")
    return ", ".join(parts)


def set_global(sb: MariaDBSandbox, name: str, value: str) -> None:
    if not name.replace("_", "").isalnum():
        raise SystemExit(f"not a variable name: {name!r}")
    conn = sb.admin_connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET GLOBAL {name} = %s", (int(value) if value.isdigit() else value,))
    finally:
        conn.close()


def more_load(sb: MariaDBSandbox, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    """A second sysbench for the rest of the run: the difference in threads and in rate."""
    threads = max(args.then_threads - args.threads, 1) if args.then_threads else args.threads
    rate = max(args.then_rate - args.rate, 1) if args.then_rate else args.rate
    return load(sb, threads, rate, args.seconds - args.seconds // 2 + 5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--description", default="")
    parser.add_argument("--pool-size", type=int, default=2)
    parser.add_argument("--stall-limit", type=int, default=500)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument(
        "--rate", type=int, default=0, help="sysbench --rate, transactions/s (0: as fast as it goes)"
    )
    parser.add_argument("--long", type=int, default=0, help="connections running long CPU-bound statements")
    parser.add_argument("--long-seconds", type=float, default=2.0, help="length of each long statement")
    parser.add_argument("--set", action="append", default=[], help="NAME=VALUE[@SECOND], half-way by default")
    parser.add_argument("--then-threads", type=int, default=0, help="threads from half-way on")
    parser.add_argument("--then-rate", type=int, default=0, help="rate from half-way on")
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--warmup", type=int, default=10, help="seconds of load before the recording")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--demo-act", action="store_true", help="record make demo's opening act (demochanges.py) instead"
    )
    args = parser.parse_args(argv)
    # What the load did (the act's measured rate among it) goes to stderr beside the recording.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    recording = asyncio.run(record_act(args) if args.demo_act else record(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(recording, indent=None, separators=(",", ":")) + "\n")
    print(f"{args.out}: {len(recording['seconds'])} seconds, changes {recording['changes']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
