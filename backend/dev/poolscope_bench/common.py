"""What every bench part shares: the sizes it runs with, the sandbox it runs against, progress output."""

from __future__ import annotations

import os
import platform
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from poolscope.config import Settings, TargetConfig
from poolscope_dev.sandbox import MONITOR_USER, MariaDBSandbox
from poolscope_dev.sysbench import SysbenchTarget

OVERHEAD_TARGET = 0.99  # TPS with monitoring ÷ without
EXTRA_PORT_P95_TARGET_MS = 15.0
MIN_POLLS_FOR_VERDICT = 60


@dataclass
class BenchConfig:
    """Sizes of every part; the defaults finish in well under 10 minutes on 2 cores."""

    quick: bool = False
    # 1 and 2: sysbench TPS ratio, in ABBA-ordered pairs.
    test: str = "oltp_read_write"
    threads: int = 16
    run_s: int = 15
    pairs: int = 4
    warmup_s: int = 10
    tables: int = 4
    table_size: int = 10_000
    poll_interval_s: float = 1.0
    # CPU per poll / scrape on the idle server.
    idle_ops: int = 50
    idle_baseline_s: float = 5.0
    # 3: poll wall time under load.
    load_threads: int = 100
    polls: int = 70
    idle_polls: int = 20
    poll_gap_s: float = 0.2
    # 4: store ingest.
    ingest_polls: int = 1000
    store_groups: int = 8
    # 5: chart serving.
    chart_hours: float = 24.0
    raw_hours: float = 6.0
    live_minutes: float = 5.0
    chart_queries: int = 20
    chart_points: int = 600
    # Which parts run.
    sysbench: bool = True
    exporter: bool = True
    control: bool = False
    strict: bool = False

    @classmethod
    def quick_sizes(cls) -> BenchConfig:
        return cls(
            quick=True,
            run_s=5,
            pairs=2,
            warmup_s=2,
            tables=2,
            table_size=2_000,
            polls=20,
            idle_polls=5,
            idle_ops=10,
            idle_baseline_s=1.0,
            ingest_polls=200,
            raw_hours=0.25,
            live_minutes=2.0,
            chart_queries=5,
        )


@dataclass
class BenchContext:
    cfg: BenchConfig
    sandbox: MariaDBSandbox
    workdir: Path
    started: float = field(default_factory=time.monotonic)

    @property
    def sysbench_target(self) -> SysbenchTarget:
        return SysbenchTarget.from_sandbox(self.sandbox)

    def monitor_dsn(self) -> str:
        return self.sandbox.dsn(MONITOR_USER)

    def settings(self, *targets: TargetConfig) -> Settings:
        return Settings(
            poll_interval_s=self.cfg.poll_interval_s,
            store_url=f"sqlite+aiosqlite:///{self.workdir}/poolscope.db",
            targets=list(targets),
        )

    def target(self, name: str, extra_port: int | None = None) -> TargetConfig:
        return TargetConfig(name=name, dsn=self.monitor_dsn(), extra_port=extra_port)


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def interpreter() -> str:
    """The Python the bench and what it starts run on (this venv's): its version and where it is.
    One built without PGO or LTO cost ~8 % more CPU per target-poll here (scripts/python.sh)."""
    return f"{platform.python_version()} {os.path.realpath(sys.executable)}"


_T0 = time.monotonic()


def progress(message: str) -> None:
    """A progress line on stderr (the report itself goes to stdout)."""
    print(f"[bench {time.monotonic() - _T0:6.1f}s] {message}", file=sys.stderr, flush=True)


def catch_stop_signals() -> Callable[[], None]:
    """SIGTERM and Ctrl-C raise KeyboardInterrupt, so a run's `finally` stops what it started.

    Returns the function that puts the previous handlers back.
    """

    def _on_term(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, _on_term)
    # Ctrl-C ends the run cleanly even when started from a shell that ignores SIGINT for jobs.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)

    return restore


def bench_workdir(given: Path | None, prefix: str) -> tuple[Path, bool]:
    """`given` (kept afterwards) or a new temp dir the run removes: (path, whether the run owns it)."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix)) if given is None else given.absolute()
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir, given is None
