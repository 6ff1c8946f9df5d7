"""CPU per sample of SqlStore's own write path on a warm SQLite store
(docs/decisions/0009-sqlite-samples-head.md): warmbench's load through the real code, so a tree without store/head.py measures the
direct insert and one with it the head and its moves.

    python -m poolscope_bench.headbench [--targets 300] [--per-target 40] [--prefill 300] [--seconds 20]

A migrated store on a file; `--targets` targets of `--per-target` series each (their series made
by a first write_polls), `--prefill` seconds of one sample per series put straight into samples,
then `--seconds` seconds of polls written by two SqlStores (two pollers, half the targets each) in
batches of 22 polls, taking turns; with a head, it is moved every 10 polled seconds (as the
store's own interval would on a running fleet). Prints this process's CPU per sample.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path

from poolscope.schemas import Sample, TargetInfo
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore

T0 = 1_700_000_000.0
BATCH_POLLS = 22
MOVE_EVERY_S = 10


def polls(targets: list[str], per_target: int, ts: float) -> list[Poll]:
    return [
        Poll(
            TargetInfo(name=t, status="up", poll_interval_s=1.0),
            None,
            [Sample(metric=f"m{k}", value=float(k % 7)) for k in range(per_target)],
            ts,
        )
        for t in targets
    ]


async def run(path: Path, targets: int, per_target: int, prefill: int, seconds: int) -> dict[str, float]:
    url = f"sqlite+aiosqlite:///{path}"
    await asyncio.to_thread(upgrade_to_head, url)
    names = [f"db-{i:04d}" for i in range(targets)]
    halves = [names[: targets // 2], names[targets // 2 :]]
    stores = [SqlStore(url, raw_retention_s=86400, rollup_retention_s=86400) for _ in halves]
    for store in stores:
        store._next_move = float("inf")  # moves at polled time below (absent before store/head.py)
    for store, half in zip(stores, halves, strict=True):
        await store.write_polls(polls(half, per_target, T0 - 1))
    if hasattr(stores[0], "move_head"):
        await stores[0].move_head()
    con = sqlite3.connect(path)
    ids = [r[0] for r in con.execute("SELECT id FROM series")]
    for s in range(prefill):
        con.executemany("INSERT INTO samples VALUES (?, ?, ?)", ((i, T0 + s, 1.0) for i in ids))
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    rows = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for s in range(prefill, prefill + seconds):
        for i in range(0, len(halves[0]), BATCH_POLLS):
            for store, half in zip(stores, halves, strict=True):
                batch = polls(half[i : i + BATCH_POLLS], per_target, T0 + s)
                await store.write_polls(batch)
                rows += sum(len(p.samples) for p in batch)
        if hasattr(stores[0], "move_head") and (s + 1 - prefill) % MOVE_EVERY_S == 0:
            await stores[0].move_head()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    for store in stores:
        await store.close()
    return {
        "rows_before": len(ids) * prefill,
        "samples": rows,
        "head": float(hasattr(stores[0], "move_head")),
        "cpu_us_per_sample": round(cpu / rows * 1e6, 2),
        "wall_us_per_sample": round(wall / rows * 1e6, 2),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_bench.headbench", description=__doc__.split("\n")[0]
    )
    p.add_argument("--targets", type=int, default=300)
    p.add_argument("--per-target", type=int, default=40)
    p.add_argument("--prefill", type=int, default=300, help="seconds of samples stored before (300)")
    p.add_argument("--seconds", type=int, default=20, help="seconds of polls timed (20)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="headbench-") as tmp:
        result = asyncio.run(
            run(Path(tmp) / "store.db", args.targets, args.per_target, args.prefill, args.seconds)
        )
    print(result)


if __name__ == "__main__":
    main()
