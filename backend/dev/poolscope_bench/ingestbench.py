"""Part 4's batched figures: many targets' polls through the scheduler's store path
(store.writer), and the samples alone (series ids + the bulk insert, no latest rows), each as
wall-clock samples/s and per CPU-second of this process, plus the PostgreSQL server's CPU.

The two are apart because they have different owners and different costs: a poll's latest row
carries its whole state JSON (store/latest.py), the samples are ~100 small rows (store/ingest.py).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

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


async def _measured(
    samples: int, work: Callable[[], Awaitable[Any]], server_pid: int | None
) -> dict[str, Any]:
    """Run `work()`: wall and CPU figures per sample, this process's and the server's."""
    server0 = tree_usage(server_pid).cpu_s if server_pid else 0.0
    cpu0 = time.process_time()
    started = time.perf_counter()
    await work()
    wall_s = time.perf_counter() - started
    cpu_s = time.process_time() - cpu0
    server_cpu_s = tree_usage(server_pid).cpu_s - server0 if server_pid else None
    return {
        "samples": samples,
        "total_s": round(wall_s, 3),
        "samples_per_s": round(samples / wall_s, 1),
        # This process (with aiosqlite's thread), not the PostgreSQL server: that is apart.
        "samples_per_cpu_s": round(samples / cpu_s, 1) if cpu_s > 0 else None,
        "client_us_per_sample": round(cpu_s / samples * 1e6, 2),
        "server_us_per_sample": round(server_cpu_s / samples * 1e6, 2) if server_cpu_s is not None else None,
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
    progress(f"store ingest: {len(submits)} polls of {BATCH_TARGETS} targets through the batch writer")
    before = store.writer.batches_written
    figures = await _measured(
        len(submits) * len(poll.samples),
        lambda: asyncio.gather(*(store.writer.submit(*args) for args in submits)),
        server_pid,
    )
    return {
        "targets": BATCH_TARGETS,
        "polls": len(submits),
        "batches": store.writer.batches_written - before,
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

    figures = await _measured(len(polls) * len(poll.samples), work, server_pid)
    return {
        "polls": len(polls),
        "polls_per_batch": SAMPLES_BATCH_POLLS,
        **figures,
    }
