"""CPU per recommender evaluation (recommend/engine.py) on a copy of a warm store
(docs/decisions/0013-recommender-every-minute.md).

    python -m poolscope_bench.recbench --store /path/fleet.db [--targets 100] [--rounds 3] [--profile]

The store is a fleet bench's SQLite file (`make bench-fleet ... --workdir DIR` leaves DIR/run-N/
fleet.db); it is copied (with its -wal and -shm) to a temporary directory first, never written.
Its targets are those of its latest rows. Each evaluation is at a time before every target's latest
row, so every one reads the same kind of window: "full" is a first evaluation (the whole window
read), "incremental" the following ones, STEP_S (30 s) apart, which read only what is
new. Prints this process's CPU (every thread: the event loop's and aiosqlite's) per evaluation.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import pstats
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from poolscope.config import Settings, TargetConfig
from poolscope.recommend.engine import Recommender
from poolscope.store.sql import SqlStore

STEP_S = 30.0


def copy_store(src: Path, into: Path) -> Path:
    dst = into / "store.db"
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    return dst


async def run(path: Path, targets: int, rounds: int, profile: bool) -> dict[str, float]:
    con = sqlite3.connect(path)
    names = [r[0] for r in con.execute("SELECT target FROM target_latest ORDER BY target")][:targets]
    (first_latest,) = con.execute("SELECT min(ts) FROM target_latest").fetchone()
    (oldest,) = con.execute("SELECT min(ts) FROM samples").fetchone()
    con.close()
    settings = Settings(
        store_url=f"sqlite+aiosqlite:///{path}",
        targets=[TargetConfig(name=n, dsn="mysql://bench@127.0.0.1:3306/") for n in names],
    )
    end = float(int(first_latest) - 1)
    # Every window starts after the oldest sample: read from raw samples, as on a running fleet
    # (before it, rollups answer part of it and History reads the whole window each time).
    rounds = min(rounds, int((end - settings.recommend_window_s - oldest) // STEP_S))
    if rounds < 1:
        raise SystemExit(
            f"the store holds too short a history for a {settings.recommend_window_s:.0f} s window"
        )
    store = SqlStore(settings.store_url, raw_retention_s=86400, rollup_retention_s=86400 * 30)
    out: dict[str, float] = {"targets": len(names), "rounds": rounds}
    try:
        # Warms the statement cache, the marks and SQLite's page cache; not timed.
        for name in names:
            await Recommender(settings, store).evaluate(name, now=end)
        full = Recommender(settings, store)
        t0 = time.process_time()
        for name in names:
            await full.evaluate(name, now=end)
        out["full_cpu_ms"] = round((time.process_time() - t0) / len(names) * 1e3, 3)
        rec = Recommender(settings, store)
        for name in names:
            await rec.evaluate(name, now=end - STEP_S * rounds)
        prof = cProfile.Profile() if profile else None
        # As the run loop evaluates (with its kept connection, where the tree has one).
        kept = rec.reads.kept() if hasattr(rec, "reads") else contextlib.nullcontext()
        async with kept:
            t0 = time.process_time()
            if prof is not None:
                prof.enable()
            for k in range(rounds - 1, -1, -1):
                for name in names:
                    await rec.evaluate(name, now=end - STEP_S * k)
            if prof is not None:
                prof.disable()
        out["incremental_cpu_ms"] = round((time.process_time() - t0) / len(names) / rounds * 1e3, 3)
        # One whole-window read per target (its first evaluation), else the figures mean another thing.
        out["whole_window_reads"] = full._history.full_reads + rec._history.full_reads
        out["active_recommendations"] = sum(len(st.active) for st in rec._state.values())
        if prof is not None:
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    finally:
        await store.engine.dispose()
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m poolscope_bench.recbench", description=__doc__.split("\n")[0])
    p.add_argument("--store", type=Path, required=True, help="a fleet bench's SQLite store (copied first)")
    p.add_argument("--targets", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3, help="incremental evaluations per target (3)")
    p.add_argument("--profile", action="store_true", help="print cProfile's top of the incremental ones")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="recbench-") as tmp:
        path = copy_store(args.store, Path(tmp))
        print(asyncio.run(run(path, args.targets, args.rounds, args.profile)))


if __name__ == "__main__":
    main()
