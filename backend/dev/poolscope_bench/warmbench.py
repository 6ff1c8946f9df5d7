"""What a sample insert costs SQLite as the samples table fills (docs/decisions/0009-sqlite-samples-head.md).

    python -m poolscope_bench.warmbench [--series 12000] [--prefill 300] [--seconds 10] [--pragmas ...]

The store's samples table (WITHOUT ROWID, primary key (series_id, ts)) on a file, `--prefill`
seconds of one sample per series already in it, then `--seconds` more seconds written the way two
pollers write them at 300 targets: each poller its half of the series, in batches of 900 samples
(22 polls of ~40), one transaction each, the two connections taking turns. Prints this process's
CPU (SQLite's work, plain sqlite3 without SQLAlchemy) per inserted sample. `--pragmas` adds
PRAGMAs to every connection (e.g. "cache_size=-65536;wal_autocheckpoint=10000"), before WAL is set.
`--staged S` tries a layout the store does not have: polls go to a small table of the same shape,
moved into samples every S seconds (one INSERT ... SELECT and DELETE), its cost included.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
from pathlib import Path

BATCH = 900
T0 = 1_700_000_000.0
SCHEMA = (
    "CREATE TABLE samples (series_id INTEGER NOT NULL, ts FLOAT NOT NULL, value FLOAT,"
    " PRIMARY KEY (series_id, ts)) WITHOUT ROWID"
)
INSERT = "INSERT INTO {} (series_id, ts, value) VALUES (?, ?, ?)"
MOVE = "INSERT INTO samples SELECT * FROM recent ORDER BY series_id, ts"


def connect(path: Path, pragmas: list[str]) -> sqlite3.Connection:
    con = sqlite3.connect(path, isolation_level=None)
    for pragma in pragmas:
        con.execute(f"PRAGMA {pragma}")
    # As store/sql.py sets every connection of the store.
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA busy_timeout=5000")
    return con


def run(
    path: Path, series: int, prefill: int, seconds: int, pragmas: list[str], staged: int = 0
) -> dict[str, float]:
    first = connect(path, pragmas)
    first.execute(SCHEMA)
    first.execute(SCHEMA.replace("samples", "recent"))
    table = "recent" if staged else "samples"
    first.execute("BEGIN")
    for s in range(prefill):
        first.executemany(INSERT.format("samples"), ((i, T0 + s, float(i % 7)) for i in range(series)))
    first.execute("COMMIT")
    first.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pollers = [connect(path, pragmas), connect(path, pragmas)]
    half = series // 2
    rows = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for s in range(prefill, prefill + seconds):
        for k in range(0, half, BATCH):
            for j, con in enumerate(pollers):
                batch = [(j * half + i, T0 + s, 1.0) for i in range(k, min(k + BATCH, half))]
                con.execute("BEGIN IMMEDIATE")
                con.executemany(INSERT.format(table), batch)
                con.execute("COMMIT")
                rows += len(batch)
        if staged and (s + 1 - prefill) % staged == 0:
            pollers[0].execute("BEGIN IMMEDIATE")
            pollers[0].execute(MOVE)
            pollers[0].execute("DELETE FROM recent")
            pollers[0].execute("COMMIT")
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    for con in (first, *pollers):
        con.close()
    return {
        "rows_before": series * prefill,
        "cpu_us_per_sample": round(cpu / rows * 1e6, 2),
        "wall_us_per_sample": round(wall / rows * 1e6, 2),
        "file_mb": round(os.path.getsize(path) / 1e6, 1),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_bench.warmbench", description=__doc__.split("\n")[0]
    )
    p.add_argument("--series", type=int, default=12000, help="series (300 targets x ~40)")
    p.add_argument("--prefill", type=int, default=300, help="seconds of samples stored before (300)")
    p.add_argument("--seconds", type=int, default=10, help="seconds of samples timed (10)")
    p.add_argument("--pragmas", default="", help="';'-separated PRAGMAs for every connection")
    p.add_argument("--staged", type=int, default=0, help="move a staging table into samples every S s")
    args = p.parse_args(argv)
    pragmas = [x.strip() for x in args.pragmas.split(";") if x.strip()]
    with tempfile.TemporaryDirectory(prefix="warmbench-") as tmp:
        result = run(Path(tmp) / "store.db", args.series, args.prefill, args.seconds, pragmas, args.staged)
    print({"pragmas": pragmas, "staged_s": args.staged, **result})


if __name__ == "__main__":
    main()
