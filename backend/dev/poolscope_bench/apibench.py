"""CPU of API processes (role "api") alone, at a fleet's steady state, without pollers or MariaDB.

    python -m poolscope_bench.apibench prepare --store /path/fleet.db --out polls.pkl [--targets 300]
    python -m poolscope_bench.apibench run --polls polls.pkl --trees cur /tmp/before/backend \\
        [--live ui] [--seconds 60] [--warmup 20] [--prefill 310]

`prepare` keeps each target's latest poll (info, state and samples) of a fleet bench's store
(`make bench-fleet ... --workdir DIR` leaves DIR/run-N/fleet.db). `run` replays them into a new
SQLite store from one writer process: first `--prefill` seconds of history (so the store is older
than recommend_window_s, as on a fleet that has run a while: the recommender then reads only what is
new), then every target once a second, in writes of 150 polls as a poller's batching writer hands
them over. One API process per `--trees` entry reads that store, all in the same minutes: "cur" is
this checkout, any other entry a tree put first on PYTHONPATH (a `git archive` of another commit's
backend/); "@NAME=VALUE" after an entry sets an environment variable for that process only. Each
gets what the fleet bench asks (fleetprobe.py: /api/targets and /api/overview in turn, once a
second) and, with `--live`, SSE clients: "all" one unfiltered /api/live, "ui" what the UI keeps
open on a target's page (the app-wide alerts stream and that target's polls). Prints each API
process's CPU (utime + stime from /proc, every thread) over `--seconds` after `--warmup`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_dev import supervisor

BATCH = 150  # polls per write: what a poller's batching writer hands over at 300 targets
FIRST_PORT = 38100
LIVE_PATHS = {
    "": [],
    "all": ["/api/live"],
    "ui": ["/api/live?events=alert", "/api/live?target={target}"],
}
SERVE_API = (
    "import sys; from poolscope.cli import _serve_api; from poolscope.config import load_settings; "
    "_serve_api(load_settings(sys.argv[1]), 'api')"
)


def open_store(url: str) -> SqlStore:
    return SqlStore(url, raw_retention_s=6 * 3600, rollup_retention_s=30 * 86400)


def prepare(store_path: Path, out: Path, count: int) -> None:
    async def read() -> list[tuple[Any, ...]]:
        store = open_store(f"sqlite+aiosqlite:///{store_path}")
        db = sqlite3.connect(store_path)
        try:
            names = [r[0] for r in db.execute("SELECT target FROM target_latest ORDER BY target")][:count]
            polls = []
            for name in names:
                latest = await store.latest(name)
                assert latest is not None
                info, state = latest
                rows = db.execute(
                    "SELECT s.metric, s.labels, x.value FROM series s JOIN (SELECT * FROM samples UNION ALL "
                    "SELECT * FROM samples_head) x ON x.series_id = s.id WHERE s.target = ? AND x.ts = ? "
                    "ORDER BY s.id",
                    (name, info.last_poll_at),
                ).fetchall()
                polls.append((info.model_dump(), state.model_dump() if state else None, rows))
            return polls
        finally:
            db.close()
            await store.close()

    polls = asyncio.run(read())
    with out.open("wb") as f:
        pickle.dump(polls, f)
    print(f"{len(polls)} targets, {sum(len(p[2]) for p in polls) / max(1, len(polls)):.1f} samples a poll")


def write(store_path: Path, polls_path: Path, seconds: float, prefill_s: float) -> None:
    """The writer process: the polls again and again, stamped with the time of writing."""
    url = f"sqlite+aiosqlite:///{store_path}"
    upgrade_to_head(url)
    with polls_path.open("rb") as f:
        kept = pickle.load(f)
    base = [
        (
            TargetInfo.model_validate(info),
            TargetState.model_validate(state) if state else None,
            [Sample(metric=m, labels=json.loads(labels), value=v) for m, labels, v in rows],
        )
        for info, state, rows in kept
    ]

    def polls_at(ts: float) -> list[Poll]:
        return [
            Poll(
                info=info.model_copy(update={"last_poll_at": ts, "last_success_at": ts}),
                state=state.model_copy(update={"ts": ts}) if state is not None else None,
                samples=samples,
                ts=ts,
            )
            for info, state, samples in base
        ]

    async def run() -> None:
        store = open_store(url)
        try:
            started = time.time()
            for back in range(int(prefill_s), 0, -1):
                polls = polls_at(started - back)
                for i in range(0, len(polls), BATCH):
                    await store.write_polls(polls[i : i + BATCH])
            await asyncio.to_thread(Path(f"{store_path}.ready").touch)  # run() waits for it
            due = time.monotonic()
            end = due + seconds
            while time.monotonic() < end:
                polls = polls_at(time.time())
                for i in range(0, len(polls), BATCH):
                    await store.write_polls(polls[i : i + BATCH])
                    await asyncio.sleep(0.4)  # spread over the second, as the pollers' batches are
                due += 1.0
                await asyncio.sleep(max(0.0, due - time.monotonic()))
        finally:
            await store.close()

    asyncio.run(run())


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# What the load threads could not do (ask): a run with any is refused.
FAILURES: list[str] = []


def ask(port: int, live: str, target: str, stop: threading.Event) -> None:
    """What the fleet bench asks, once a second, and the SSE streams of `live`, read to the end."""

    def follow(path: str) -> None:
        try:
            with httpx.stream("GET", f"http://127.0.0.1:{port}{path}", timeout=None) as res:
                res.raise_for_status()
                for _chunk in res.iter_bytes():
                    if stop.is_set():
                        return
        except Exception as exc:  # counted: the figure would be of less load than asked
            FAILURES.append(f"{port} {path}: {exc!r}")

    for path in LIVE_PATHS[live]:
        threading.Thread(target=follow, args=(path.format(target=target),), daemon=True).start()
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        turn = 0
        while not stop.is_set():
            path = "/api/targets" if turn % 2 == 0 else "/api/overview"
            try:
                client.get(path).raise_for_status()
            except Exception as exc:
                FAILURES.append(f"{port} {path}: {exc!r}")
                return
            turn += 1
            stop.wait(1.0)


@dataclass
class Api:
    name: str
    port: int
    proc: subprocess.Popen[bytes]


def start_api(k: int, spec: str, workdir: Path, store: Path, names: list[str]) -> Api:
    tree, *assignments = spec.split("@")
    port = FIRST_PORT + k
    config = workdir / f"api{k}.toml"
    config.write_text(
        f'store_url = "sqlite+aiosqlite:///{store}"\nlisten_host = "127.0.0.1"\nlisten_port = {port}\n'
        + "".join(f'\n[[targets]]\nname = "{n}"\ndsn = "mysql://monitor@127.0.0.1:1/"\n' for n in names)
    )
    env = dict(os.environ, POOLSCOPE_CONFIG=str(config))
    for assignment in assignments:
        key, _, value = assignment.partition("=")
        env[key] = value
    if tree != "cur":
        env["PYTHONPATH"] = tree
    # The environment outranks the config file (config.py): whatever was inherited or assigned,
    # this API, which has no users, listens on loopback only.
    env["POOLSCOPE_LISTEN_HOST"] = "127.0.0.1"
    with (workdir / f"api{k}.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE_API, str(config)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd="/",
        )
    return Api(spec, port, proc)


def wait_ready(api: Api, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if api.proc.poll() is not None:
            raise SystemExit(f"{api.name}: the API process ended ({api.proc.returncode}); see its log")
        try:
            if httpx.get(f"http://127.0.0.1:{api.port}/api/targets", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{api.name}: not answering after {timeout_s:.0f} s")


def run(args: argparse.Namespace) -> None:
    workdir: Path = args.workdir
    if workdir.exists() and not (workdir / "store.db").exists():
        raise SystemExit(f"{workdir} exists and is not an apibench workdir: name a new one")
    shutil.rmtree(workdir, ignore_errors=True)  # an earlier run's
    workdir.mkdir(parents=True)
    store = workdir / "store.db"
    with args.polls.open("rb") as f:
        names = [info["name"] for info, _state, _rows in pickle.load(f)]
    writer = subprocess.Popen(
        [sys.executable, "-m", "poolscope_bench.apibench", "write", str(store), str(args.polls)]
        + [str(args.warmup + args.seconds + 120), str(args.prefill)]
    )
    apis: list[Api] = []
    stop = threading.Event()
    try:
        deadline = time.monotonic() + 600
        while not Path(f"{store}.ready").exists():
            if writer.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the writer ended or took too long to prefill the store")
            time.sleep(0.5)
        for k, spec in enumerate(args.trees):
            apis.append(start_api(k, spec, workdir, store, names))  # one at a time: all are stopped
        for api in apis:
            wait_ready(api)
        for api in apis:
            threading.Thread(target=ask, args=(api.port, args.live, names[0], stop), daemon=True).start()
        time.sleep(args.warmup)
        load = os.getloadavg()[0]
        before = [cpu_s(api.proc.pid) for api in apis]
        t0 = time.monotonic()
        time.sleep(args.seconds)
        after = [cpu_s(api.proc.pid) for api in apis]
        elapsed = time.monotonic() - t0
        if FAILURES:
            raise SystemExit("the load was not what was asked: " + "; ".join(FAILURES[:5]))
        for api, a, b in zip(apis, before, after, strict=True):
            print(
                f"{api.name}: {(b - a) / elapsed:.4f} cores (live {args.live or 'none'}, "
                f"load {load:.2f} -> {os.getloadavg()[0]:.2f})",
                flush=True,
            )
    finally:
        stop.set()
        # Terminated, then killed after 10 s: no process of the bench is left behind.
        for proc in [api.proc for api in apis] + [writer]:
            supervisor.stop_pid(proc.pid, grace_s=10, kill_s=10)
            proc.wait(10)


def main() -> None:
    if sys.argv[1:2] == ["write"]:  # the writer process (run starts it)
        write(Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
        return
    p = argparse.ArgumentParser(
        prog="python -m poolscope_bench.apibench",
        description="CPU of API processes alone, at a fleet's steady state",
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    prep = sub.add_parser("prepare", help="keep each target's latest poll of a fleet bench's store")
    prep.add_argument("--store", type=Path, required=True)
    prep.add_argument("--out", type=Path, required=True)
    prep.add_argument("--targets", type=int, default=300)
    r = sub.add_parser("run", help="replay them into a new store and measure API processes on it")
    r.add_argument("--polls", type=Path, required=True)
    r.add_argument("--trees", nargs="+", default=["cur"], help='"cur" or a tree, each with @NAME=VALUE...')
    r.add_argument("--live", choices=sorted(LIVE_PATHS), default="", help="SSE clients (none)")
    r.add_argument("--seconds", type=float, default=60.0)
    r.add_argument("--warmup", type=float, default=20.0)
    r.add_argument("--prefill", type=float, default=310.0, help="seconds of history first (310)")
    r.add_argument("--workdir", type=Path, default=Path("/tmp/poolscope-apibench"))
    args = p.parse_args()
    if args.cmd == "prepare":
        prepare(args.store, args.out, args.targets)
    else:
        run(args)


if __name__ == "__main__":
    main()
