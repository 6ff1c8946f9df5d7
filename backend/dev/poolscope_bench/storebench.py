"""Parts 4 and 5: store ingest (SqlStore.write_poll, and the scheduler's path: BatchWriter with
many targets) and serving charts through SqlStore.query, on SQLite and on a private PostgreSQL.

The polls are real: one poll result captured from the sandbox, its per-group series widened to
`store_groups` groups (a server with that many CPUs has that many thread groups), giving the
≈ 80-150 samples a real poll of a production server writes.

The 24 h store holds what the product would hold after a day at 1 poll/s with default retention:
rollups (60 s) for the whole day and raw samples for the last `raw_hours`. The older part is
synthesized straight into the tables (a day of real polls would take a day); the newest minutes
go through write_poll and maintain() like the product, so the rollup high-water mark and the
raw/rollup seam are the real ones. Every chart is read through SqlStore.query.
"""

from __future__ import annotations

import asyncio
import math
import random
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from poolscope.poller.target_poller import PollResult
from poolscope.schemas import MetricsOut, Sample, TargetInfo, TargetState
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import ROLLUP_HWM_KEY, SqlStore, canonical_labels
from poolscope.store.writer import BatchWriter
from poolscope_bench import ingestbench
from poolscope_bench.common import BenchContext, progress
from poolscope_bench.stats import summarize
from poolscope_dev.pgsandbox import PostgresSandbox, PostgresSandboxError

TARGET = "bench"
ROLLUP_STEP_S = 60
FILL_CHUNK_ROWS = 100_000
# The target page's charts (frontend/src/features/target/metrics.ts).
CHART_METRICS = (
    "tp_group_queue_length",
    "qps",
    "threads_connected",
    "threads_running",
    "pool_threads",
    "pool_idle_threads",
)
PAGE_METRICS = (
    "tp_group_queue_length",
    "tp_group_active_threads",
    "tp_group_stalled",
    "tp_queue_wait_max_ms",
    "tp_queue_wait_avg_ms",
    "tp_queued_connections",
    "threads_connected",
    "threads_running",
    "threads_cached",
    "pool_threads",
    "pool_idle_threads",
    "qps",
    "tps",
    "trx_active",
    "trx_lock_waits",
    "trx_longest_age_s",
    "thread_cache_miss_ratio",
    "buffer_pool_miss_ratio",
    "poll_duration_ms",
)


class RealisticPoll:
    """One captured poll, widened to `groups` thread groups, ready to be written again and again."""

    def __init__(self, result: PollResult, groups: int) -> None:
        if result.state is None:
            raise ValueError("the captured poll has no state (target down?)")
        self.captured_samples = len(result.samples)
        self.captured_groups = len(result.state.groups)
        self.groups = max(groups, self.captured_groups)
        self.samples = _widen_samples(result.samples, self.captured_groups, self.groups)
        state = result.state.model_copy(deep=True)
        if state.groups:
            state.groups = [
                state.groups[i % len(state.groups)].model_copy(update={"group_id": i})
                for i in range(self.groups)
            ]
        self.state: TargetState = state.model_copy(update={"target": TARGET})
        self.info: TargetInfo = result.info.model_copy(update={"name": TARGET})
        # One list in both, as the poller hands them.
        self.state.collectors = self.info.collectors
        self.state_json_bytes = len(self.state.model_dump_json())

    def series_keys(self) -> list[tuple[str, dict[str, str], float | None]]:
        return [(s.metric, s.labels, s.value) for s in self.samples]

    def at(self, ts: float, values: list[float | None]) -> tuple[TargetInfo, TargetState, list[Sample]]:
        samples = [
            Sample(metric=s.metric, labels=s.labels, value=v)
            for s, v in zip(self.samples, values, strict=True)
        ]
        info = self.info.model_copy(update={"last_poll_at": ts, "last_success_at": ts})
        state = self.state.model_copy(update={"ts": ts})
        return info, state, samples


def _widen_samples(samples: list[Sample], have: int, want: int) -> list[Sample]:
    out = list(samples)
    if have <= 0 or want <= have:
        return out
    for s in samples:
        group = s.labels.get("group")
        if group is None or not group.isdigit() or int(group) != 0:
            continue
        # Copy each group-0 series family to the new groups, taking values round-robin.
        for g in range(have, want):
            source = next(
                (x for x in samples if x.metric == s.metric and x.labels.get("group") == str(g % have)), s
            )
            out.append(Sample(metric=s.metric, labels={**s.labels, "group": str(g)}, value=source.value))
    return out


class ValueModel:
    """Plausible values for each series over a day: a daily wave around the captured value plus noise."""

    def __init__(self, poll: RealisticPoll, seed: int = 7) -> None:
        rng = random.Random(seed)
        self.bases: list[float] = []
        self.phases: list[float] = []
        self.integer: list[bool] = []
        for metric, _labels, value in poll.series_keys():
            base = abs(value) if value else 0.0
            if base == 0.0:
                base = {"tp_group_queue_length": 2.0, "qps": 1500.0, "tps": 75.0}.get(metric, 1.0)
            self.bases.append(base)
            self.phases.append(rng.uniform(0, 2 * math.pi))
            self.integer.append(metric.startswith(("tp_group_", "threads_", "pool_", "trx_")))
        self.rng = rng

    def values(self, ts: float) -> list[float | None]:
        day = 2 * math.pi * (ts % 86400) / 86400
        out: list[float | None] = []
        for base, phase, integer in zip(self.bases, self.phases, self.integer, strict=True):
            v = base * (1.0 + 0.5 * math.sin(day + phase)) + base * 0.2 * (self.rng.random() - 0.5)
            out.append(float(round(v)) if integer else round(v, 3))
        return out


async def _new_store(
    url: str, raw_retention_s: float, *, migrate: bool = True, in_flight: int | None = None
) -> SqlStore:
    """`in_flight`: the batch writer's batches in flight on PostgreSQL (None: its default)."""
    if migrate:
        await asyncio.to_thread(upgrade_to_head, url)
    store = SqlStore(
        url, raw_retention_s=raw_retention_s, rollup_retention_s=8 * 86400, rollup_step_s=ROLLUP_STEP_S
    )
    if in_flight is not None:
        store.writer = BatchWriter(store, in_flight=in_flight)
    return store


def _db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


# ------------------------------------------------------------------ part 4: ingest


async def run(ctx: BenchContext, poll: RealisticPoll) -> dict[str, Any]:
    """Parts 4 and 5 on SQLite, then on a private PostgreSQL (skipped with a reason if it cannot start)."""
    out: dict[str, Any] = {"store_ingest": {}, "chart": {}}
    sqlite_url = f"sqlite+aiosqlite:///{ctx.workdir}/ingest.db"
    out["store_ingest"]["sqlite"] = await ingest(ctx, poll, sqlite_url, ctx.workdir / "ingest.db")
    out["chart"]["sqlite"] = await charts(ctx, poll, f"sqlite+aiosqlite:///{ctx.workdir}/chart.db")
    # Its own directory under the system temp dir: the postgres user must be able to reach it,
    # which the bench's private 0700 work dir does not allow.
    pg = PostgresSandbox()
    try:
        progress("starting a private PostgreSQL for the store parts")
        await asyncio.to_thread(pg.start)
        url = pg.create_database("bench_ingest")
        out["store_ingest"]["postgresql"] = await ingest(
            ctx, poll, url, None, pg.proc.pid if pg.proc else None
        )
        out["chart"]["postgresql"] = await charts(ctx, poll, pg.create_database("bench_chart"))
    except (PostgresSandboxError, OSError, subprocess.CalledProcessError) as exc:
        out["store_ingest"].setdefault("postgresql", {"skipped": f"PostgreSQL: {exc}"})
        out["chart"].setdefault("postgresql", {"skipped": f"PostgreSQL: {exc}"})
    finally:
        await asyncio.to_thread(pg.destroy)
    return out


async def ingest(
    ctx: BenchContext, poll: RealisticPoll, url: str, path: Path | None, server_pid: int | None = None
) -> dict[str, Any]:
    """write_poll one poll at a time, then the batched paths (ingestbench.py); `server_pid`: the
    PostgreSQL server whose CPU the batched figures report."""
    cfg = ctx.cfg
    store = await _new_store(url, raw_retention_s=6 * 3600)
    model = ValueModel(poll)
    start_ts = math.floor(time.time()) - cfg.ingest_polls
    # Build every poll's objects first: the poller pays for those, not the store.
    polls = [poll.at(start_ts + i + 0.25, model.values(start_ts + i)) for i in range(cfg.ingest_polls)]
    progress(
        f"store ingest: {cfg.ingest_polls} polls x {len(poll.samples)} samples via write_poll ({store.dialect})"
    )
    walls: list[float] = []
    try:
        cpu0 = time.process_time()
        started = time.perf_counter()
        for info, state, samples in polls:
            t0 = time.perf_counter()
            await store.write_poll(info, state, samples, ts=state.ts)
            walls.append((time.perf_counter() - t0) * 1000)
        total_s = time.perf_counter() - started
        # Process-wide, so it includes aiosqlite's worker thread: all the CPU a write costs.
        cpu_ms = (time.process_time() - cpu0) * 1000
        batched = await ingestbench.batched(store, poll, model, start_ts, cfg.ingest_polls * 5, server_pid)
        samples_only = await ingestbench.samples_only(
            store, poll, model, start_ts, cfg.ingest_polls * 5, server_pid
        )
        # One writer process, then one per core at once: the baseline and the deployment's shape.
        writer_processes = [
            await ingestbench.writer_processes(
                url, store, poll, start_ts, cfg.ingest_polls * 5, k, server_pid
            )
            for k in (1, ingestbench.default_writers())
        ]
        t0 = time.perf_counter()
        counts = await store.maintain(now=start_ts + cfg.ingest_polls + 1)
        maintain_ms = (time.perf_counter() - t0) * 1000
    finally:
        await store.close()
    samples_total = cfg.ingest_polls * len(poll.samples)
    return {
        "dialect": store.dialect,
        "polls": cfg.ingest_polls,
        "samples_per_poll": len(poll.samples),
        "groups": poll.groups,
        "state_json_bytes": poll.state_json_bytes,
        "total_s": round(total_s, 3),
        "samples_per_s": round(samples_total / total_s, 1),
        "polls_per_s": round(cfg.ingest_polls / total_s, 1),
        "write_ms": summarize(walls),
        "first_write_ms": round(walls[0], 3) if walls else None,
        "cpu_ms_per_write": round(cpu_ms / cfg.ingest_polls, 3),
        "batched": batched,
        "samples_only": samples_only,
        "writer_processes": writer_processes,
        "maintain_ms": round(maintain_ms, 1),
        "rolled_up_rows": counts["rolled_up"],
        "db_bytes": _db_bytes(path) if path is not None else None,
    }


# ------------------------------------------------------------------ part 5: charts


def _fill_rows(
    ids: list[int], model: ValueModel, rollup_from: int, synth_end: int, raw_from: int
) -> tuple[Iterator[tuple[Any, ...]], Iterator[tuple[Any, ...]]]:
    """Rollup rows [rollup_from, synth_end) and raw sample rows [raw_from, synth_end) for the series ids."""

    def rollup_rows() -> Iterator[tuple[int, float, int, float | None, float | None, float | None]]:
        for minute in range(rollup_from, synth_end, ROLLUP_STEP_S):
            for sid, v in zip(ids, model.values(minute + ROLLUP_STEP_S / 2), strict=True):
                if v is None:
                    yield sid, float(minute), ROLLUP_STEP_S, None, None, None
                else:
                    yield sid, float(minute), ROLLUP_STEP_S, v * ROLLUP_STEP_S, v * 0.8, v * 1.2

    integer = model.integer
    jitter = [1.0 + 0.1 * (model.rng.random() - 0.5) for _ in range(4099)]

    def raw_rows() -> Iterator[tuple[int, float, float | None]]:
        # The daily wave per minute, a cheap per-second jitter on top (millions of rows).
        k = 0
        for minute in range(raw_from - raw_from % ROLLUP_STEP_S, synth_end, ROLLUP_STEP_S):
            base = model.values(minute + ROLLUP_STEP_S / 2)
            for second in range(max(minute, raw_from), min(minute + ROLLUP_STEP_S, synth_end)):
                ts = second + 0.25
                for i, sid in enumerate(ids):
                    v = base[i]
                    k += 1
                    if v is None:
                        yield sid, ts, None
                    elif integer[i]:
                        yield sid, ts, float(round(v * jitter[k % 4099]))
                    else:
                        yield sid, ts, round(v * jitter[k % 4099], 3)

    return rollup_rows(), raw_rows()


def _fill(
    path: Path, poll: RealisticPoll, model: ValueModel, rollup_from: int, synth_end: int, raw_from: int
) -> dict[str, int]:
    """SQLite: synthesize series, rollups and raw samples straight into the file."""
    con = sqlite3.connect(path)
    try:
        # A bulk load: no rollback journal and no fsync while filling; WAL again at the end,
        # as the store runs it.
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("PRAGMA cache_size=-262144")
        ids: list[int] = []
        for metric, labels, _v in poll.series_keys():
            cur = con.execute(
                "INSERT INTO series (target, metric, labels) VALUES (?, ?, ?)",
                (TARGET, metric, canonical_labels(labels)),
            )
            assert cur.lastrowid is not None
            ids.append(cur.lastrowid)
        rollup_rows, raw_rows = _fill_rows(ids, model, rollup_from, synth_end, raw_from)
        counts = {"series": len(ids), "rollups": 0, "raw": 0}
        counts["rollups"] = _insert_chunks(
            con,
            "INSERT INTO rollups (series_id, ts, count, sum, min, max) VALUES (?, ?, ?, ?, ?, ?)",
            rollup_rows,
        )
        counts["raw"] = _insert_chunks(
            con, "INSERT INTO samples (series_id, ts, value) VALUES (?, ?, ?)", raw_rows
        )
        con.execute(
            "INSERT INTO store_meta (key, value) VALUES (?, ?)", (ROLLUP_HWM_KEY, repr(float(synth_end)))
        )
        con.commit()
        con.execute("PRAGMA journal_mode=WAL")
    finally:
        con.close()
    return counts


async def _fill_postgres(
    store: SqlStore, poll: RealisticPoll, model: ValueModel, rollup_from: int, synth_end: int, raw_from: int
) -> dict[str, int]:
    """PostgreSQL: the same rows by COPY."""
    async with store.engine.begin() as conn:
        raw = await conn.get_raw_connection()
        pg: Any = raw.driver_connection
        ids = [
            await pg.fetchval(
                "INSERT INTO series (target, metric, labels) VALUES ($1, $2, $3) RETURNING id",
                TARGET,
                metric,
                canonical_labels(labels),
            )
            for metric, labels, _v in poll.series_keys()
        ]
        rollup_rows, raw_rows = _fill_rows(ids, model, rollup_from, synth_end, raw_from)
        counts = {"series": len(ids), "rollups": 0, "raw": 0}
        for table, columns, rows in (
            ("rollups", ["series_id", "ts", "count", "sum", "min", "max"], rollup_rows),
            ("samples", ["series_id", "ts", "value"], raw_rows),
        ):
            for _ in range(10_000_000):  # bounded: far more chunks than any configured fill
                chunk = [row for _, row in zip(range(FILL_CHUNK_ROWS), rows, strict=False)]
                if not chunk:
                    break
                await pg.copy_records_to_table(table, records=chunk, columns=columns)
                counts["rollups" if table == "rollups" else "raw"] += len(chunk)
        await pg.execute(
            "INSERT INTO store_meta (key, value) VALUES ($1, $2)", ROLLUP_HWM_KEY, repr(float(synth_end))
        )
        await pg.execute("ANALYZE")
    return counts


def _insert_chunks(con: sqlite3.Connection, sql: str, rows: Iterator[tuple[Any, ...]]) -> int:
    total = 0
    for _ in range(10_000_000):  # bounded: far more chunks than any configured fill
        chunk = [row for _, row in zip(range(FILL_CHUNK_ROWS), rows, strict=False)]
        if not chunk:
            break
        con.executemany(sql, chunk)
        total += len(chunk)
    con.commit()
    return total


async def _time_queries(
    store: SqlStore, metrics: tuple[str, ...], start: float, end: float, points: int, repeats: int
) -> dict[str, Any]:
    """Each query alone, and as the API answers it: the query plus the JSON FastAPI makes of the
    returned MetricsOut (a TypeAdapter's validate, then dump_json, as FastAPI's response field)."""
    answer = TypeAdapter(MetricsOut)
    walls: list[float] = []
    cpus: list[float] = []
    answer_walls: list[float] = []
    answer_cpus: list[float] = []
    out = None
    for _ in range(repeats):
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = await store.query(TARGET, metrics, start, end, points=points)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
        answer.dump_json(answer.validate_python(out), by_alias=True)
        answer_walls.append((time.perf_counter() - t0) * 1000)
        answer_cpus.append((time.process_time() - c0) * 1000)
    assert out is not None
    return {
        "metrics": len(metrics),
        "series": len(out.series),
        "points_per_series_max": max((len(s.points) for s in out.series), default=0),
        "resolution": out.resolution,
        "step_s": round(out.step_s, 3),
        "first_ms": round(walls[0], 3),
        # This process's CPU (with aiosqlite's thread; not the PostgreSQL server's): less blurred
        # than wall time on a busy machine.
        "cpu_p50_ms": summarize(cpus).get("p50"),
        "answer_p50_ms": summarize(answer_walls).get("p50"),
        "answer_cpu_p50_ms": summarize(answer_cpus).get("p50"),
        **{f"{k}_ms" if k != "n" else "queries": v for k, v in summarize(walls).items()},
    }


async def charts(ctx: BenchContext, poll: RealisticPoll, url: str) -> dict[str, Any]:
    cfg = ctx.cfg
    path = ctx.workdir / "chart.db"
    raw_retention_s = cfg.raw_hours * 3600
    store = await _new_store(url, raw_retention_s=max(raw_retention_s, 600))
    model = ValueModel(poll, seed=11)
    end = float(math.floor(time.time()))
    live_s = int(cfg.live_minutes * 60)
    synth_end = int(math.floor((end - live_s) / ROLLUP_STEP_S) * ROLLUP_STEP_S)
    rollup_from = int(math.floor((end - cfg.chart_hours * 3600) / ROLLUP_STEP_S) * ROLLUP_STEP_S)
    raw_from = int(max(rollup_from, synth_end - raw_retention_s))
    progress(
        f"chart store: {cfg.chart_hours:g} h of rollups + {cfg.raw_hours:g} h raw x {len(poll.samples)} series"
    )
    try:
        t0 = time.perf_counter()
        if store.dialect == "sqlite":
            counts = await asyncio.to_thread(_fill, path, poll, model, rollup_from, synth_end, raw_from)
        else:
            counts = await _fill_postgres(store, poll, model, rollup_from, synth_end, raw_from)
        fill_s = time.perf_counter() - t0
        # The newest minutes as the product writes them: one write_poll per second, then maintain().
        walls: list[float] = []
        for i in range(int(end) - synth_end):
            ts = synth_end + i + 0.25
            info, state, samples = poll.at(ts, model.values(ts))
            t1 = time.perf_counter()
            await store.write_poll(info, state, samples, ts=ts)
            walls.append((time.perf_counter() - t1) * 1000)
        t1 = time.perf_counter()
        maintained = await store.maintain(now=end)
        maintain_ms = (time.perf_counter() - t1) * 1000
        progress(f"chart queries: {cfg.chart_queries} x 24 h and 5 min, points={cfg.chart_points}")
        day = await _time_queries(
            store, CHART_METRICS, end - cfg.chart_hours * 3600, end, cfg.chart_points, cfg.chart_queries
        )
        five = await _time_queries(store, CHART_METRICS, end - 300, end, cfg.chart_points, cfg.chart_queries)
        page = await _time_queries(
            store,
            PAGE_METRICS,
            end - cfg.chart_hours * 3600,
            end,
            cfg.chart_points,
            cfg.chart_queries,  # as many as the single charts: its CPU is bimodal (garbage collections)
        )
    finally:
        await store.close()
    return {
        "hours": cfg.chart_hours,
        "raw_hours": cfg.raw_hours,
        "series_in_store": counts["series"],
        "rollup_rows": counts["rollups"] + maintained["rolled_up"],
        "raw_rows": counts["raw"] + len(walls) * len(poll.samples),
        "dialect": store.dialect,
        "db_bytes": _db_bytes(path) if store.dialect == "sqlite" else None,
        "fill_s": round(fill_s, 1),
        "live_writes": len(walls),
        "live_write_ms": summarize(walls),
        "maintain_ms": round(maintain_ms, 1),
        "chart_24h": day,
        "chart_5min": five,
        "page_24h": page,
    }
