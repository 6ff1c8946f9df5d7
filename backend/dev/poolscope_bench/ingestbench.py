"""Part 4's batched figures: many targets' polls through the scheduler's store path
(store.writer), and the samples alone (series ids + the bulk insert, no latest rows), each as
wall-clock samples/s and per CPU-second of this process, plus the PostgreSQL server's CPU.

The two are apart because they have different owners and different costs: a poll's latest row
carries its whole state JSON (store/latest.py), the samples are ~100 small rows (store/ingest.py).

The targets' series exist before the writer's figure is taken (one untimed poll per target at an
earlier second): creating a series happens once in a target's life, not per poll. On PostgreSQL
the figures add the server's CPU per sample, how it splits over its busiest processes (the
writer's batches in flight each use their own) and the WAL it wrote per sample.

Its own entry runs the PostgreSQL figures alone, on a replayed fixture poll (no MariaDB needed):
`python -m poolscope_bench.ingestbench [--polls N] [--rounds R] [--in-flight K]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import text

from poolscope.store.ingest import Poll
from poolscope.store.sql import SqlStore
from poolscope.store.writer import BatchWriter
from poolscope_bench.common import progress
from poolscope_bench.proctree import tree_usage

if TYPE_CHECKING:
    from poolscope_bench.storebench import RealisticPoll, ValueModel

# Targets whose polls a batch interleaves (the scheduler's store path).
BATCH_TARGETS = 100
# Polls per batch in the samples-only figure: what the writer's 150 ms window collects at
# 1,000 targets polled every second; 15,000 samples, under its 20,000-row cap.
SAMPLES_BATCH_POLLS = 150
# The replayed polls of the entry below (backend/tests/fixtures, as `python -m poolscope_dev` uses).
FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


async def _wal_bytes(store: SqlStore) -> int | None:
    if store.dialect != "postgresql":
        return None
    async with store.engine.connect() as conn:
        return int((await conn.execute(text("SELECT wal_bytes FROM pg_stat_wal"))).scalar() or 0)


async def _measured(
    store: SqlStore, samples: int, work: Callable[[], Awaitable[Any]], server_pid: int | None
) -> dict[str, Any]:
    """Run `work()`: wall and CPU figures per sample, this process's and the server's."""
    server0 = tree_usage(server_pid) if server_pid else None
    wal0 = await _wal_bytes(store)
    cpu0 = time.process_time()
    started = time.perf_counter()
    await work()
    wall_s = time.perf_counter() - started
    cpu_s = time.process_time() - cpu0
    server1 = tree_usage(server_pid) if server_pid else None
    wal1 = await _wal_bytes(store)
    server_cpu_s = None
    busiest: list[float] = []
    if server0 is not None and server1 is not None:
        server_cpu_s = server1.cpu_s - server0.cpu_s
        # The server's processes by CPU in the window: its backends, then WAL writer, vacuum...
        busiest = sorted(
            (cpu - server0.cpu_by_pid.get(pid, 0.0) for pid, cpu in server1.cpu_by_pid.items()), reverse=True
        )[:3]
    return {
        "samples": samples,
        "total_s": round(wall_s, 3),
        "samples_per_s": round(samples / wall_s, 1),
        # This process (with aiosqlite's thread), not the PostgreSQL server: that is apart.
        "samples_per_cpu_s": round(samples / cpu_s, 1) if cpu_s > 0 else None,
        "client_us_per_sample": round(cpu_s / samples * 1e6, 2),
        "server_us_per_sample": round(server_cpu_s / samples * 1e6, 2) if server_cpu_s is not None else None,
        # Cores the busiest server processes used over the run (wall): do batches in flight scale?
        "server_busiest_cores": [round(c / wall_s, 2) for c in busiest] if busiest else None,
        "wal_bytes_per_sample": round((wal1 - wal0) / samples, 1)
        if wal0 is not None and wal1 is not None
        else None,
        "load_average": [round(x, 1) for x in os.getloadavg()],
    }


def _polls(
    poll: RealisticPoll, model: ValueModel, start_ts: int, rounds: int, offset: float
) -> list[tuple[Any, ...]]:
    """BATCH_TARGETS targets' polls for each of `rounds` seconds, at `offset` past each second."""
    out = []
    for i in range(rounds):
        info, state, samples = poll.at(start_ts + i + offset, model.values(start_ts + i))
        for k in range(BATCH_TARGETS):
            name = f"bench-{k}"
            out.append(
                (
                    info.model_copy(update={"name": name}),
                    state.model_copy(update={"target": name}),
                    samples,
                    state.ts,
                )
            )
    return out


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
    # The targets' series, created before the clock starts (at a second the timed polls skip).
    await asyncio.gather(
        *(store.writer.submit(i, st, sm, ts - 0.375) for i, st, sm, ts in submits[:BATCH_TARGETS])
    )
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


async def _postgres_only(polls: int, rounds: int, in_flight: int | None) -> list[dict[str, Any]]:
    from poolscope_bench.storebench import ValueModel, _new_store
    from poolscope_dev.pgsandbox import PostgresSandbox

    poll = await _fixture_poll(8)
    pg = PostgresSandbox()
    out = []
    try:
        await asyncio.to_thread(pg.start)
        pid = pg.proc.pid if pg.proc else None
        for r in range(rounds):
            store = await _new_store(pg.create_database(f"bench_ingest_{r}"), raw_retention_s=6 * 3600)
            if in_flight is not None:
                store.writer = BatchWriter(store, in_flight=in_flight)
            start_ts = int(time.time()) - polls
            try:
                model = ValueModel(poll)
                out.append(
                    {
                        "round": r,
                        "writer": await batched(store, poll, model, start_ts, polls, pid),
                        "samples_only": await samples_only(store, poll, model, start_ts, polls, pid),
                    }
                )
            finally:
                await store.close()
    finally:
        await asyncio.to_thread(pg.destroy)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolscope_bench.ingestbench", description=__doc__)
    p.add_argument("--polls", type=int, default=5000, help="polls per figure (5000: 470k samples)")
    p.add_argument("--rounds", type=int, default=1, help="repetitions, each on a new database")
    p.add_argument("--in-flight", type=int, help="the writer's batches in flight (default: its own)")
    args = p.parse_args(argv)
    for result in asyncio.run(_postgres_only(args.polls, args.rounds, args.in_flight)):
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
