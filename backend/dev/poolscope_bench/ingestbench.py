"""Part 4's batched figures: many targets' polls through the scheduler's store path
(store.writer), and the samples alone (series ids + the bulk insert, no latest rows), each as
wall-clock samples/s and per CPU-second of the writing process(es), plus the PostgreSQL server's CPU.

The two are apart because they have different owners and different costs: a poll's latest row
carries its whole state JSON (store/latest.py), the samples are ~100 small rows (store/ingest.py).

The targets' series exist before the writer's figure is taken (one untimed poll per target at an
earlier second): creating a series happens once in a target's life, not per poll. On PostgreSQL
the figures add the server's CPU per sample, how it splits over its busiest processes (the
writer's batches in flight each use their own) and the WAL it wrote per sample.

Then the writer path again from writer processes tuned as pollers (`writer_processes`): one
alone (the baseline), then one per core at once, each with its own targets: the store's ingest
from several pollers; no deployment writes through one process alone.

Its own entry runs the PostgreSQL figures alone, on a replayed fixture poll (no MariaDB needed):
`python -m poolscope_bench.ingestbench [--polls N] [--rounds R] [--in-flight K] [--writers W]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import text

from poolscope.store.head import readable_samples_sql
from poolscope.store.ingest import Poll
from poolscope.store.sql import SqlStore
from poolscope_bench.common import progress
from poolscope_bench.proctree import tree_usage

if TYPE_CHECKING:
    from poolscope_bench.storebench import RealisticPoll, ValueModel

# Targets whose polls a batch interleaves (the scheduler's store path).
BATCH_TARGETS = 100
# Polls per batch in the samples-only figure: what the writer's 150 ms window collects at
# 1,000 targets polled every second; 15,000 samples, under its 20,000-row cap.
SAMPLES_BATCH_POLLS = 150
# The writer processes' targets: WRITERS_PREFIX, writers in the figure, "-", writer, "-", target.
WRITERS_PREFIX = "bench-p"
# A writer process's bound for each step (start-up, a barrier, its run).
CHILD_TIMEOUT_S = 300.0
# Raw retention of the bench's stores: no retention pass deletes what a figure wrote.
RAW_RETENTION_S = 6 * 3600
# The replayed polls of the entry below (backend/tests/fixtures, as `python -m poolscope_dev` uses).
FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


async def _wal_position(store: SqlStore) -> int | None:
    """Bytes of WAL the server has inserted so far. Its position, exact when read: pg_stat_wal's
    counts arrive when a backend reports its stats (at most once a second, or when it ends), so a
    window of a few seconds on live connections missed or gained a second of them."""
    if store.dialect != "postgresql":
        return None
    async with store.engine.connect() as conn:
        statement = text("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')")
        return int((await conn.execute(statement)).scalar() or 0)


class _Window:
    """The PostgreSQL server's CPU and WAL over a run (nothing on SQLite): `await
    _Window.start(...)`, the run, then `figures()`."""

    def __init__(self, store: SqlStore, server_pid: int | None, server0: Any, wal0: int | None) -> None:
        self.store, self.server_pid, self.server0, self.wal0 = store, server_pid, server0, wal0

    @classmethod
    async def start(cls, store: SqlStore, server_pid: int | None) -> _Window:
        server0 = tree_usage(server_pid) if server_pid else None
        return cls(store, server_pid, server0, await _wal_position(store))

    async def figures(self, samples: int, wall_s: float, client_cpu_s: float) -> dict[str, Any]:
        server1 = tree_usage(self.server_pid) if self.server_pid else None
        wal1 = await _wal_position(self.store)
        server0, wal0 = self.server0, self.wal0
        server_cpu_s = None
        busiest: list[float] = []
        if server0 is not None and server1 is not None:
            server_cpu_s = server1.cpu_s - server0.cpu_s
            # The server's processes by CPU in the window: its backends, then WAL writer, vacuum...
            busiest = sorted(
                (cpu - server0.cpu_by_pid.get(pid, 0.0) for pid, cpu in server1.cpu_by_pid.items()),
                reverse=True,
            )[:3]
        return {
            "samples": samples,
            "total_s": round(wall_s, 3),
            "samples_per_s": round(samples / wall_s, 1),
            # The writing processes (with aiosqlite's thread), not the PostgreSQL server: that is apart.
            "samples_per_cpu_s": round(samples / client_cpu_s, 1) if client_cpu_s > 0 else None,
            "client_us_per_sample": round(client_cpu_s / samples * 1e6, 2),
            "server_us_per_sample": round(server_cpu_s / samples * 1e6, 2)
            if server_cpu_s is not None
            else None,
            # Cores the busiest server processes used over the run (wall): do batches in flight scale?
            "server_busiest_cores": [round(c / wall_s, 2) for c in busiest] if busiest else None,
            "wal_bytes_per_sample": round((wal1 - wal0) / samples, 1)
            if wal0 is not None and wal1 is not None
            else None,
            "load_average": [round(x, 1) for x in os.getloadavg()],
        }


async def _measured(
    store: SqlStore, samples: int, work: Callable[[], Awaitable[Any]], server_pid: int | None
) -> dict[str, Any]:
    """Run `work()`: wall and CPU figures per sample, this process's and the server's."""
    window = await _Window.start(store, server_pid)
    cpu0 = time.process_time()
    started = time.perf_counter()
    await work()
    wall_s = time.perf_counter() - started
    return await window.figures(samples, wall_s, time.process_time() - cpu0)


def _polls(
    poll: RealisticPoll, model: ValueModel, start_ts: int, rounds: int, offset: float, prefix: str = "bench"
) -> list[tuple[Any, ...]]:
    """BATCH_TARGETS targets' polls for each of `rounds` seconds, at `offset` past each second."""
    out = []
    for i in range(rounds):
        info, state, samples = poll.at(start_ts + i + offset, model.values(start_ts + i))
        for k in range(BATCH_TARGETS):
            name = f"{prefix}-{k}"
            out.append(
                (
                    info.model_copy(update={"name": name}),
                    state.model_copy(update={"target": name}),
                    samples,
                    state.ts,
                )
            )
    return out


async def _create_series(store: SqlStore, submits: list[tuple[Any, ...]]) -> None:
    """The targets' series, created before the clock starts: each target's first poll once more,
    at a second the timed polls skip."""
    await asyncio.gather(
        *(store.writer.submit(i, st, sm, ts - 0.375) for i, st, sm, ts in submits[:BATCH_TARGETS])
    )


async def batched(
    store: SqlStore,
    poll: RealisticPoll,
    model: ValueModel,
    start_ts: int,
    total_polls: int,
    server_pid: int | None,
) -> dict[str, Any]:
    """The scheduler's path: BATCH_TARGETS targets' polls submitted at once through store.writer."""
    submits = _polls(poll, model, start_ts, max(total_polls // BATCH_TARGETS, 1), 0.5)
    await _create_series(store, submits)
    progress(f"store ingest: {len(submits)} polls of {BATCH_TARGETS} targets through the batch writer")
    before = store.writer.batches_written
    figures = await _measured(
        store,
        len(submits) * len(poll.samples),
        lambda: asyncio.gather(*(store.writer.submit(*args) for args in submits)),
        server_pid,
    )
    return {
        "targets": BATCH_TARGETS,
        "polls": len(submits),
        "batches": store.writer.batches_written - before,
        "batches_in_flight": getattr(store.writer, "in_flight", 1),
        **figures,
    }


async def samples_only(
    store: SqlStore,
    poll: RealisticPoll,
    model: ValueModel,
    start_ts: int,
    total_polls: int,
    server_pid: int | None,
) -> dict[str, Any]:
    """The samples part of write_polls alone, in batches of SAMPLES_BATCH_POLLS polls."""
    polls = [
        Poll(*args) for args in _polls(poll, model, start_ts, max(total_polls // BATCH_TARGETS, 1), 0.75)
    ]
    progress(f"store ingest: {len(polls)} polls' samples alone, {SAMPLES_BATCH_POLLS} polls per transaction")
    ingest = store.samples

    async def work() -> None:
        for i in range(0, len(polls), SAMPLES_BATCH_POLLS):
            rows = await ingest.rows(store.engine, polls[i : i + SAMPLES_BATCH_POLLS])
            async with store.engine.begin() as conn:
                await ingest.insert(conn, rows)

    figures = await _measured(store, len(polls) * len(poll.samples), work, server_pid)
    return {
        "polls": len(polls),
        "polls_per_batch": SAMPLES_BATCH_POLLS,
        **figures,
    }


async def writer_processes(
    url: str,
    store: SqlStore,
    poll: RealisticPoll,
    start_ts: int,
    total_polls: int,
    writers: int,
    server_pid: int | None,
    in_flight: int | None = None,
) -> dict[str, Any]:
    """Several pollers' writers into one store at once: `writers` processes (spawned, tuned as a
    poller process is), each with BATCH_TARGETS targets of its own and its share of the polls,
    released together. What the store takes in from a deployment of that many pollers; with one, the like-for-like baseline. `store` (the same database) reads
    the server's WAL and the stored count; the CPU figures are the writers' sum."""
    prefix = f"{WRITERS_PREFIX}{writers}-"  # each figure's own targets, so figures share a store
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(writers + 1)
    results = ctx.Queue()
    share = max(total_polls // writers, BATCH_TARGETS)
    progress(f"store ingest: {writers} writer process(es), {share} polls of {BATCH_TARGETS} targets each")
    procs = [
        ctx.Process(
            target=_writer_process,
            args=(_WriterJob(url, poll, start_ts, share, f"{prefix}{w}", in_flight), barrier, results),
            name=f"ingest-writer-{w}",
            daemon=True,
        )
        for w in range(writers)
    ]
    reports: list[dict[str, Any]] = []
    try:
        for proc in procs:
            proc.start()
        # Ready (series created), then go: the server's figures start between the two.
        await asyncio.to_thread(barrier.wait, CHILD_TIMEOUT_S)
        window = await _Window.start(store, server_pid)
        await asyncio.to_thread(barrier.wait, CHILD_TIMEOUT_S)
        reports = await asyncio.to_thread(_reports, results, procs)
        figures = await window.figures(
            sum(r["samples"] for r in reports),
            max(r["end"] for r in reports) - min(r["start"] for r in reports),
            sum(r["cpu_s"] for r in reports),
        )
        # Done: the writers close their connections only now, so each server process's CPU is
        # still its own (an ended one's goes to the postmaster's) when the figures are read.
        await asyncio.to_thread(barrier.wait, CHILD_TIMEOUT_S)
    except (threading.BrokenBarrierError, WriterFailed) as exc:
        errors = exc.errors if isinstance(exc, WriterFailed) else []
        more = await asyncio.to_thread(_reports, results, procs, strict=False)
        raise WriterFailed(
            errors + [r["error"] for r in more if "error" in r] or ["a barrier broke"]
        ) from None
    finally:
        # Frees any writer still at a barrier (after a failure here); a no-op once all are past it.
        barrier.abort()
        for proc in procs:
            if proc.pid is not None:
                await asyncio.to_thread(proc.join, CHILD_TIMEOUT_S)
                if proc.is_alive():
                    proc.kill()
                    await asyncio.to_thread(proc.join, 5)
    # Every sample the writers were answered for is in the store (their series-creating polls too).
    async with store.engine.connect() as conn:
        stored = (
            await conn.execute(
                text(
                    f"SELECT count(*) FROM {readable_samples_sql(store.dialect)} AS s"
                    " JOIN series ON series.id = s.series_id WHERE series.target LIKE :prefix"
                ),
                {"prefix": f"{prefix}%"},
            )
        ).scalar_one()
    return {
        "writers": writers,
        "targets": BATCH_TARGETS * writers,
        "polls": sum(r["polls"] for r in reports),
        "batches": sum(r["batches"] for r in reports),
        "batches_in_flight": reports[0]["in_flight"],
        "submitted_samples": sum(r["submitted"] for r in reports),
        "stored_samples": int(stored),
        **figures,
    }


def default_writers() -> int:
    """As many as `serve` runs pollers by default (one per core: config.py), two at least."""
    from poolscope.config import Settings

    return max(Settings().worker_count(), 2)


class WriterFailed(RuntimeError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__(f"a writer process failed: {errors}")
        self.errors = errors


def _reports(results: Any, procs: list[Any], *, strict: bool = True) -> list[dict[str, Any]]:
    """One report per writer; a writer that ended without one (killed) or reported an error
    raises WriterFailed at once (strict), else what came within a few seconds is returned."""
    reports: list[dict[str, Any]] = []
    deadline = time.monotonic() + (CHILD_TIMEOUT_S if strict else 5.0)
    while len(reports) < len(procs) and time.monotonic() < deadline:
        try:
            reports.append(results.get(True, 0.5))
        except queue.Empty:
            if strict and any(p.exitcode is not None for p in procs) and results.empty():
                raise WriterFailed(
                    [
                        f"{p.name} ended (exit code {p.exitcode}) without a report"
                        for p in procs
                        if p.exitcode is not None
                    ]
                ) from None
            continue
        if strict and "error" in reports[-1]:
            raise WriterFailed([reports[-1]["error"]])
    if strict and len(reports) < len(procs):
        raise WriterFailed([f"no report within {CHILD_TIMEOUT_S:.0f} s"])
    return reports


@dataclass(frozen=True)
class _WriterJob:
    """What one writer process writes (pickled to it)."""

    url: str
    poll: RealisticPoll
    start_ts: int
    polls: int
    prefix: str  # its targets' names: prefix, "-", target
    in_flight: int | None


def _writer_process(job: _WriterJob, barrier: Any, results: Any) -> None:
    try:
        asyncio.run(_writer_run(job, barrier, results))
    except threading.BrokenBarrierError:
        pass  # another writer (or the parent) failed and reports why
    except BaseException as exc:
        barrier.abort()
        results.put({"error": f"{type(exc).__name__}: {exc}"})


async def _writer_run(job: _WriterJob, barrier: Any, results: Any) -> None:
    from poolscope.services import tune_gc
    from poolscope_bench.storebench import ValueModel, _new_store

    poll = job.poll
    store = await _new_store(job.url, raw_retention_s=RAW_RETENTION_S, migrate=False, in_flight=job.in_flight)
    tune_gc("poller")  # start-up done, as in a poller process
    try:
        rounds = max(job.polls // BATCH_TARGETS, 1)
        submits = _polls(poll, ValueModel(poll), job.start_ts, rounds, 0.5, job.prefix)
        await _create_series(store, submits)
        before = store.writer.batches_written
        await asyncio.to_thread(barrier.wait, CHILD_TIMEOUT_S)
        await asyncio.to_thread(barrier.wait, CHILD_TIMEOUT_S)
        cpu0, started = time.process_time(), time.monotonic()
        await asyncio.gather(*(store.writer.submit(*args) for args in submits))
        end, cpu_s = time.monotonic(), time.process_time() - cpu0
        results.put(
            {
                "start": started,
                "end": end,
                "cpu_s": cpu_s,
                "polls": len(submits),
                "samples": len(submits) * len(poll.samples),
                "batches": store.writer.batches_written - before,
                "in_flight": store.writer.in_flight,
                "submitted": (len(submits) + BATCH_TARGETS) * len(poll.samples),
            }
        )
        await asyncio.to_thread(barrier.wait, CHILD_TIMEOUT_S)
    finally:
        await store.close()


# ------------------------------------------------------------------ its own entry: PostgreSQL only


async def _fixture_poll(groups: int) -> RealisticPoll:
    """The third poll of the replayed MariaDB 10.11 fixture (so rates have a previous value)."""
    from poolscope.config import Settings, TargetConfig
    from poolscope.poller.target_poller import TargetPoller
    from poolscope_bench.storebench import RealisticPoll
    from poolscope_dev import replay

    replay.register(FIXTURES)
    settings = Settings(targets=[TargetConfig(name="capture", dsn="fixture://mariadb/10.11")])
    poller = TargetPoller(settings.targets[0], settings)
    try:
        for _ in range(3):
            result = await poller.poll_once()
    finally:
        await poller.close()
    return RealisticPoll(result, groups)


async def _postgres_only(
    polls: int, rounds: int, in_flight: int | None, writers: int
) -> list[dict[str, Any]]:
    from poolscope_bench.storebench import ValueModel, _new_store
    from poolscope_dev.pgsandbox import PostgresSandbox

    poll = await _fixture_poll(8)
    pg = PostgresSandbox()
    out = []
    try:
        await asyncio.to_thread(pg.start)
        pid = pg.proc.pid if pg.proc else None
        for r in range(rounds):
            url = pg.create_database(f"bench_ingest_{r}")
            store = await _new_store(url, raw_retention_s=RAW_RETENTION_S, in_flight=in_flight)
            start_ts = int(time.time()) - polls
            try:
                model = ValueModel(poll)
                figures = {
                    "round": r,
                    "writer": await batched(store, poll, model, start_ts, polls, pid),
                    "samples_only": await samples_only(store, poll, model, start_ts, polls, pid),
                }
            finally:
                await store.close()
            url = pg.create_database(f"bench_ingest_{r}_processes")
            store = await _new_store(url, raw_retention_s=RAW_RETENTION_S)
            try:
                figures["writer_processes"] = [
                    await writer_processes(url, store, poll, start_ts, polls, k, pid, in_flight)
                    for k in sorted({1, writers})
                ]
            finally:
                await store.close()
            out.append(figures)
    finally:
        await asyncio.to_thread(pg.destroy)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolscope_bench.ingestbench", description=__doc__)
    p.add_argument("--polls", type=int, default=5000, help="polls per figure (5000: 470k samples)")
    p.add_argument("--rounds", type=int, default=1, help="repetitions, each on a new database")
    p.add_argument("--in-flight", type=int, help="the writer's batches in flight (default: its own)")
    p.add_argument(
        "--writers",
        type=int,
        default=default_writers(),
        help="writer processes at once in the last figure (it also runs one alone)",
    )
    args = p.parse_args(argv)
    for result in asyncio.run(_postgres_only(args.polls, args.rounds, args.in_flight, args.writers)):
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
