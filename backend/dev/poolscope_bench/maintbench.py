"""One maintenance pass (store/rollup.py: roll-up, then retention) on a store with many series and
hours of raw samples, and how each of its reads of `samples` is planned.

The store: `--series` series (100 per target) with a sample every second for `--hours`, with
gaps as a fleet has them (a stretch missing here and there, targets added late and removed early),
written straight into the tables. The first maintain() rolls all of it up (timed apart); then each
pass adds 30 s of samples to every series (untimed) and runs maintain() 30 s later, as the poller
does every MAINTENANCE_INTERVAL_S, rolling up and deleting about half a rollup step. Figures: the
pass's wall time, this process's CPU and (PostgreSQL) the server's; read_marks() as a chart reader
pays it; and every statement of the last pass that reads `samples`, with its plan.

`python -m poolscope_bench.maintbench [--series N] [--hours H] [--passes P] [--engines sqlite,postgresql]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection

from poolscope.store.migrate import upgrade_to_head
from poolscope.store.rollup import read_marks
from poolscope.store.sql import SqlStore
from poolscope_bench.proctree import tree_usage

T_END = 1_800_000_000  # the store's newest second at the start (a multiple of every step)
PASS_S = 30  # the poller's maintenance interval
SERIES_PER_TARGET = 100
CHUNK = 100_000


def sample_rows(series: int, start: int, end: int) -> Iterator[tuple[int, float, float | None]]:
    """A sample per series per second in [start, end), with a fleet's gaps."""
    for second in range(start, end):
        age = T_END - second  # seconds before the fill's end (negative: written by a pass)
        for sid in range(1, series + 1):
            if sid % 7 == 0 and 1800 <= age < 2400:
                continue  # a stretch of ten minutes missing
            if sid % 13 == 0 and age > 3600:
                continue  # a target added an hour before the end
            if sid % 17 == 0 and age < 1200:
                continue  # a target removed twenty minutes before the end
            yield (
                sid,
                second + 0.25,
                None if sid % 29 == 0 and second % 50 == 0 else float(sid % 11 + second % 5),
            )


def _chunks(rows: Iterator[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    for _ in range(10_000_000):  # bounded: far more chunks than any configured fill
        chunk = [row for _, row in zip(range(CHUNK), rows, strict=False)]
        if not chunk:
            return
        yield chunk


async def write_rows(
    store: SqlStore, path: Path | None, rows: Iterator[tuple[Any, ...]], series: int = 0
) -> None:
    """Series ids 1..`series` (when given), then the sample rows, straight into the tables."""
    series_rows = [
        (i, f"t{(i - 1) // SERIES_PER_TARGET}", f"m{(i - 1) % SERIES_PER_TARGET}", "{}")
        for i in range(1, series + 1)
    ]
    if path is not None:
        con = sqlite3.connect(path)
        try:
            con.executemany(
                "INSERT INTO series (id, target, metric, labels) VALUES (?, ?, ?, ?)", series_rows
            )
            for chunk in _chunks(rows):
                con.executemany("INSERT INTO samples (series_id, ts, value) VALUES (?, ?, ?)", chunk)
            con.commit()
        finally:
            con.close()
        return
    async with store.engine.begin() as conn:
        pg: Any = (await conn.get_raw_connection()).driver_connection
        if series_rows:
            await pg.copy_records_to_table(
                "series", records=series_rows, columns=["id", "target", "metric", "labels"]
            )
            await pg.execute("SELECT setval(pg_get_serial_sequence('series', 'id'), $1)", series)
        for chunk in _chunks(rows):
            await pg.copy_records_to_table("samples", records=chunk, columns=["series_id", "ts", "value"])
    if series:
        async with store.engine.connect() as conn:
            await conn.exec_driver_sql("ANALYZE")  # as autovacuum would have after hours


async def samples_scans(conn: AsyncConnection, statement: str, parameters: Any) -> list[str]:
    """How the database plans to read `samples` in a statement (driver SQL and parameters), one
    line per access: e.g. "Seq Scan samples", "Index Scan samples_pkey ((series_id = ANY ($0)) AND
    (ts < ...))" on PostgreSQL, "SEARCH samples USING PRIMARY KEY (series_id=? AND ts<?)" on SQLite."""
    if conn.dialect.name == "sqlite":
        lines = await conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, tuple(parameters))
        return [str(row[-1]) for row in lines if " samples" in f" {row[-1]}"]
    plan: Any = (await conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, tuple(parameters))).scalar()
    out: list[str] = []
    todo: list[dict[str, Any]] = [(json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]]
    while todo:
        node = todo.pop()
        todo.extend(node.get("Plans", []))
        if node.get("Relation Name") == "samples" or node.get("Index Name") == "samples_pkey":
            where = node.get("Index Cond") or node.get("Recheck Cond") or node.get("Filter") or ""
            out.append(f"{node['Node Type']} {node.get('Index Name') or 'samples'} {where}".strip())
    return out


class StatementLog:
    """The driver-level statements an engine runs (to EXPLAIN them afterwards)."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.statements: list[tuple[str, Any]] = []
        event.listen(store.engine.sync_engine, "before_cursor_execute", self._seen)

    def stop(self) -> list[tuple[str, Any]]:
        event.remove(self.store.engine.sync_engine, "before_cursor_execute", self._seen)
        return self.statements

    def _seen(self, _conn, _cursor, statement, parameters, _context, _many) -> None:  # type: ignore[no-untyped-def]
        if "samples" in statement:
            self.statements.append((statement, parameters))


async def _one_engine(
    url: str, path: Path | None, series: int, hours: float, passes: int, server_pid: int | None
) -> dict[str, Any]:
    await asyncio.to_thread(upgrade_to_head, url)
    # Retention five minutes short of the fill: every pass deletes what it rolled up 5 min before.
    store = SqlStore(url, raw_retention_s=hours * 3600 - 300, rollup_retention_s=8 * 86400, rollup_step_s=60)
    try:
        t0 = time.perf_counter()
        await write_rows(store, path, sample_rows(series, int(T_END - hours * 3600), T_END), series)
        fill_s = time.perf_counter() - t0
        first = await _timed(store, T_END, server_pid)
        timed = []
        log = StatementLog(store)
        for p in range(passes):
            now = T_END + (p + 1) * PASS_S
            await write_rows(store, path, sample_rows(series, now - PASS_S, now))
            log.statements.clear()
            timed.append(await _timed(store, now, server_pid))
        marks_ms = []
        for _ in range(10):
            async with store.engine.connect() as conn:
                c0 = time.process_time()
                t1 = time.perf_counter()
                await read_marks(conn, 60)
                marks_ms.append(((time.perf_counter() - t1) * 1000, (time.process_time() - c0) * 1000))
        plans = []
        async with store.engine.connect() as conn:
            for statement, parameters in log.stop():
                plans.append(
                    {
                        "sql": " ".join(statement.split())[:160],
                        "samples": await samples_scans(conn, statement, parameters),
                    }
                )
    finally:
        await store.close()

    def p50(key: str) -> float:
        return round(statistics.median(t[key] for t in timed), 1)

    return {
        "dialect": store.dialect,
        "series": series,
        "hours": hours,
        "fill_s": round(fill_s, 1),
        "first_pass": first,
        "pass_p50": {
            k: p50(k) for k in ("wall_ms", "client_cpu_ms", "server_cpu_ms") if timed[0].get(k) is not None
        },
        "passes": timed,
        "read_marks_p50_ms": round(statistics.median(w for w, _ in marks_ms), 2),
        "read_marks_cpu_p50_ms": round(statistics.median(c for _, c in marks_ms), 2),
        "plans": plans,
    }


async def _timed(store: SqlStore, now: float, server_pid: int | None) -> dict[str, Any]:
    server0 = tree_usage(server_pid) if server_pid else None
    c0 = time.process_time()
    t0 = time.perf_counter()
    counts = await store.maintain(now=now)
    out: dict[str, Any] = {
        "wall_ms": round((time.perf_counter() - t0) * 1000, 1),
        "client_cpu_ms": round((time.process_time() - c0) * 1000, 1),
        "rolled_up": counts["rolled_up"],
        "raw_deleted": counts["raw_deleted"],
    }
    if server0 is not None and server_pid:
        out["server_cpu_ms"] = round((tree_usage(server_pid).cpu_s - server0.cpu_s) * 1000, 1)
    return out


async def _run(series: int, hours: float, passes: int, engines: list[str]) -> list[dict[str, Any]]:
    from poolscope_dev.pgsandbox import PostgresSandbox

    out = []
    with tempfile.TemporaryDirectory(prefix="poolscope-maint-") as tmp:
        if "sqlite" in engines:
            path = Path(tmp) / "store.db"
            out.append(await _one_engine(f"sqlite+aiosqlite:///{path}", path, series, hours, passes, None))
        if "postgresql" in engines:
            pg = PostgresSandbox()
            try:
                await asyncio.to_thread(pg.start)
                url = pg.create_database("bench_maint")
                out.append(
                    await _one_engine(url, None, series, hours, passes, pg.proc.pid if pg.proc else None)
                )
            finally:
                await asyncio.to_thread(pg.destroy)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolscope_bench.maintbench", description=__doc__)
    p.add_argument("--series", type=int, default=2000, help="series in the store (100 per target)")
    p.add_argument("--hours", type=float, default=2.0, help="hours of raw samples (one per second)")
    p.add_argument("--passes", type=int, default=5, help="timed maintenance passes, 30 s apart")
    p.add_argument("--engines", default="sqlite,postgresql")
    args = p.parse_args(argv)
    for result in asyncio.run(_run(args.series, args.hours, args.passes, args.engines.split(","))):
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
