"""The poller's store write per target-poll (SqlStore.write_polls on SQLite), on real polls.

    python -m poolscope_bench.writebench capture --targets 75 --rounds 12 --out /tmp/polls.pickle
    python -m poolscope_bench.writebench run --polls /tmp/polls.pickle --repeats 5

`capture` polls an idle sandbox once a second and pickles every PollResult in one dump, so the
Sample objects the collectors' reuse cache shares between targets and polls stay shared.
`run` writes them to a fresh SQLite store in batches the size the scheduler's batch writer
makes at 300 targets on two pollers (~150 polls/s each, 0.15 s window), all rounds once untimed
(series are created then), and prints the CPU per target-poll: this thread (the event loop's
Python) and the rest of the process (aiosqlite's thread, SQLite itself). A "before" tree put
first on PYTHONPATH runs the same file on the same polls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import tempfile
import time
from pathlib import Path
from typing import Any

from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore

BATCH_POLLS = 22


async def capture(targets: int, rounds: int) -> list[list[Any]]:
    from poolscope.poller.target_poller import TargetPoller
    from poolscope_bench.pollprofile import _settings
    from poolscope_dev.sandbox import MariaDBSandbox

    with tempfile.TemporaryDirectory(prefix="writebench-") as tmp:
        workdir = Path(tmp)
        with MariaDBSandbox(workdir / "sandbox", max_connections=targets + 50) as sandbox:
            settings = _settings(sandbox, workdir, targets)
            pollers = [TargetPoller(t, settings) for t in settings.targets]
            results: list[list[Any]] = []
            try:
                for round_no in range(rounds + 2):
                    started = time.monotonic()
                    polled = [await p.poll_once() for p in pollers]
                    if round_no >= 2:  # connect and discovery first
                        results.append(polled)
                    await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
            finally:
                for poller in pollers:
                    await poller.close()
    down = [r.info.name for polled in results for r in polled if r.info.status != "up"]
    if down:
        raise SystemExit(f"targets down while capturing: {sorted(set(down))}")
    return results


async def run(rounds: list[list[Any]], repeats: int, batch: int) -> dict[str, Any]:
    span = len(rounds) + 1
    with tempfile.TemporaryDirectory(prefix="writebench-") as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/poolscope.db"
        await asyncio.to_thread(upgrade_to_head, url)
        store = SqlStore(url, raw_retention_s=86400, rollup_retention_s=86400)
        try:
            base = time.time() - span * (repeats + 1)

            async def write(rep: int) -> int:
                written = 0
                for round_no, polled in enumerate(rounds):
                    ts = base + rep * span + round_no
                    polls = [Poll(r.info, r.state, r.samples, ts) for r in polled]
                    for i in range(0, len(polls), batch):
                        await store.write_polls(polls[i : i + batch])
                    written += len(polls)
                return written

            await write(0)  # every series is created on its first sight (slow sources' later)
            thread0, cpu0 = time.thread_time(), time.process_time()
            written = sum([await write(rep) for rep in range(1, repeats + 1)])
            thread_s, cpu_s = time.thread_time() - thread0, time.process_time() - cpu0
        finally:
            await store.close()
    return {
        "target_polls": written,
        "polls_per_batch": batch,
        "samples_per_poll": len(rounds[0][0].samples),
        "us_per_target_poll": round(cpu_s * 1e6 / written, 1),
        "loop_thread_us": round(thread_s * 1e6 / written, 1),
        "other_threads_us": round((cpu_s - thread_s) * 1e6 / written, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m poolscope_bench.writebench", description=__doc__)
    parser.add_argument("mode", choices=("capture", "run"))
    parser.add_argument("--targets", type=int, default=75, help="capture: targets on one sandbox")
    parser.add_argument("--rounds", type=int, default=12, help="capture: polls per target, 1 s apart")
    # No default path: a pickle is loaded as code, so it must be a file the user chose and owns.
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--polls", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5, help="run: times the captured rounds are written")
    parser.add_argument("--batch", type=int, default=BATCH_POLLS, help="run: polls per write_polls")
    args = parser.parse_args(argv)
    if args.mode == "capture":
        results = asyncio.run(capture(args.targets, args.rounds))
        # One dump: objects shared between polls stay shared.
        args.out.write_bytes(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))
        out = {
            "targets": args.targets,
            "rounds": len(results),
            "samples_per_poll": len(results[0][0].samples),
        }
    else:
        out = asyncio.run(run(pickle.loads(args.polls.read_bytes()), args.repeats, args.batch))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
