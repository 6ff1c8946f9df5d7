"""Where a target-poll's CPU goes, in one process against an idle sandbox.

    python -m poolscope_bench.pollprofile stages --targets 50 --rounds 20
    python -m poolscope_bench.pollprofile poll --targets 75 --rounds 10
    python -m poolscope_bench.pollprofile pollwrite --targets 75 --rounds 20
    python -m poolscope_bench.pollprofile fleet --targets 100 --seconds 30
    python -m poolscope_bench.pollprofile replay --targets 75 --rounds 20 --repeats 5

`stages` polls the targets one after another (nothing else runs in the process meanwhile), so
the process CPU time around each step is that step's own: statement round trip with row
decoding, collectors' parse, derive, the store write, alert evaluation, recommendation
evaluation (amortised over its cadence), live-channel encoding and the /api/targets summary.
`poll` times nothing but the poll path (TargetPoller.poll_once, no store, no timing wrappers):
the process CPU, user and system apart, divided by the polls. `pollwrite` is a poller's own
path in a poller's setting (uvloop, services.POLLER_GC_THRESHOLD, rounds 1 s apart as polls come):
poll_once and SqlStore.write_polls in batches of the size the batch writer makes at 300 targets
on two pollers; the event loop thread's CPU (the poller's Python) apart from the process's
(aiosqlite's thread: SQLite itself). `replay` is `pollwrite` without the server in the measured
process: the rounds are polled live once through a recording proxy (poolscope_bench/wirereplay.py),
then replayed `--repeats` times into fresh pollers by a process that sends back the recorded
bytes (the same statements, the same clock readings), back to back or 1 s apart (`--paced`); it
prints the least and the median CPU per target-poll over the repeats. It reads the socket as a
live poll does, whatever the driver, and leaves out the server's share of the cores, though not
the machine's other noise. `fleet` runs the whole role-"all" service stack
(scheduler, alert engine, recommender) for a while and divides the process CPU by the polls it made; run it under `py-spy record` to see
the frames. CPU time, not wall time: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from fastapi.encoders import jsonable_encoder

import poolscope.poller.target_poller as target_poller_module
from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.repository import AlertRepository
from poolscope.auth import AuthService
from poolscope.clock import SYSTEM
from poolscope.config import Settings, TargetConfig
from poolscope.poller.target_poller import TargetPoller
from poolscope.recommend.engine import Recommender
from poolscope.schemas import PollEvent, TargetInfo
from poolscope.services import POLLER_GC_THRESHOLD, run_services
from poolscope.store.ingest import Poll
from poolscope.store.live import encode
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_bench import wirereplay
from poolscope_dev.sandbox import MONITOR_USER, MariaDBSandbox

# Polls per write_polls: what the batch writer collects in its 0.15 s at 300 targets on two pollers.
WRITE_BATCH = 22


class Clock:
    """Process CPU per named stage; nested stages are subtracted from their parent."""

    def __init__(self) -> None:
        self.cpu_s: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list[float]] = []

    def overhead_s(self) -> float:
        """What timing one stage costs by itself, to take out of each stage's figure."""
        for _ in range(2000):
            with self.stage("calibration"):
                pass
        spent = self.cpu_s.pop("calibration") / self.calls.pop("calibration")
        return spent

    def clear(self) -> None:
        self.cpu_s.clear()
        self.calls.clear()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        frame = [time.process_time(), 0.0]  # start, time spent in nested stages
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            spent = time.process_time() - frame[0]
            self.cpu_s[name] += spent - frame[1]
            self.calls[name] += 1
            if self._stack:
                self._stack[-1][1] += spent


def _wrap(clock: Clock, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if asyncio.iscoroutinefunction(fn):

        async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
            with clock.stage(name):
                return await fn(*args, **kwargs)

        return wrapped_async

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with clock.stage(name):
            return fn(*args, **kwargs)

    return wrapped


def _settings(sandbox: MariaDBSandbox, workdir: Path, targets: int, dsn: str | None = None) -> Settings:
    dsn = dsn or sandbox.dsn(MONITOR_USER)
    return Settings(
        store_url=f"sqlite+aiosqlite:///{workdir}/poolscope.db",
        targets=[TargetConfig(name=f"t{i:04d}", dsn=dsn, extra_port=0) for i in range(targets)],
    )


async def stages(sandbox: MariaDBSandbox, workdir: Path, targets: int, rounds: int) -> dict[str, Any]:
    settings = _settings(sandbox, workdir, targets)
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = SqlStore(settings.store_url, raw_retention_s=3600, rollup_retention_s=86400)
    clock = Clock()
    pollers = [TargetPoller(t, settings) for t in settings.targets]
    engine = AlertEngine(settings.alerts, store.hub, AlertRepository(store.engine))
    recommender = Recommender(settings, store)
    # derive_state and target_summary as the poller module calls them, timed.
    hooks = vars(target_poller_module)
    originals = {name: hooks[name] for name in ("derive_state", "target_summary")}
    hooks.update({name: _wrap(clock, "derive", fn) for name, fn in originals.items()})
    for poller in pollers:
        poller.connection.run_batch = _wrap(clock, "statements+rows", poller.connection.run_batch)  # type: ignore[method-assign]
        for collector in poller.collectors:
            collector.parse = _wrap(clock, "parse", collector.parse)  # type: ignore[method-assign]
    polls = evaluations = 0
    recommend_s = 0.0
    try:
        for round_no in range(rounds + 2):
            if round_no == 2:  # connect, discover, baselines and series ids are not per-poll costs
                clock.clear()
                polls = evaluations = 0
                recommend_s = 0.0
            for poller in pollers:
                with clock.stage("poll other"):
                    result = await poller.poll_once()
                if result.info.status != "up":
                    raise SystemExit(f"{poller.name} is {result.info.status}: {result.info.reason}")
                with clock.stage("store write"):
                    await store.write_poll(result.info, result.state, result.samples, ts=time.time())
                event = PollEvent(
                    target=poller.name,
                    ts=result.info.last_poll_at or 0.0,
                    target_info=result.info,
                    state=result.state,
                    samples=result.samples,
                )
                with clock.stage("alert evaluation"):
                    await engine.evaluate(event)
                with clock.stage("live encode (per SSE-listening process)"):
                    encode(event)
                polls += 1
            # Timed once per round and target, charged per poll at its cadence (below).
            for poller in pollers:
                started = time.process_time()
                await recommender.evaluate(poller.name)
                recommend_s += time.process_time() - started
                evaluations += 1
            # One /api/targets request per round (a UI open on the overview asks about that often).
            with clock.stage("/api/targets (one request per round)"):
                infos = [latest[0] for t in settings.targets if (latest := await store.latest(t.name))]
                json.dumps(jsonable_encoder([TargetInfo.model_validate(i) for i in infos]))
    finally:
        hooks.update(originals)
        for poller in pollers:
            await poller.close()
        await store.close()
    overhead_s = clock.overhead_s()
    per_poll = {
        name: round(max(s - clock.calls[name] * overhead_s, 0.0) * 1000 / polls, 3)
        for name, s in clock.cpu_s.items()
    }
    per_evaluation_ms = recommend_s * 1000 / max(evaluations, 1)
    cadence = settings.poll_interval_s / settings.recommend_interval_s
    per_poll[f"recommendations (every {settings.recommend_interval_s:g} s)"] = round(
        per_evaluation_ms * cadence, 3
    )
    total = sum(per_poll.values())
    return {
        "targets": targets,
        "target_polls": polls,
        "cpu_ms_per_target_poll": dict(sorted(per_poll.items(), key=lambda kv: -kv[1])),
        "recommendation_evaluation_ms": round(per_evaluation_ms, 3),
        "total_ms": round(total, 3),
        "total_without_store_write_ms": round(total - per_poll.get("store write", 0.0), 3),
    }


async def poll_path(sandbox: MariaDBSandbox, workdir: Path, targets: int, rounds: int) -> dict[str, Any]:
    settings = _settings(sandbox, workdir, targets)
    pollers = [TargetPoller(t, settings) for t in settings.targets]
    polls = 0
    try:
        for _ in range(3):  # connect, discover, the processlist's form; not per-poll costs
            for poller in pollers:
                await poller.poll_once()
        before, cpu0 = os.times(), time.process_time()
        for _ in range(rounds):
            for poller in pollers:
                result = await poller.poll_once()
                if result.info.status != "up":
                    raise SystemExit(f"{poller.name} is {result.info.status}: {result.info.reason}")
                polls += 1
        cpu_s, after = time.process_time() - cpu0, os.times()
    finally:
        for poller in pollers:
            await poller.close()
    return {
        "targets": targets,
        "target_polls": polls,
        "poll_path_ms_per_target_poll": round(cpu_s * 1000 / polls, 3),
        "user_ms": round((after.user - before.user) * 1000 / polls, 3),
        "system_ms": round((after.system - before.system) * 1000 / polls, 3),
    }


async def poll_write(sandbox: MariaDBSandbox, workdir: Path, targets: int, rounds: int) -> dict[str, Any]:
    settings = _settings(sandbox, workdir, targets)
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = SqlStore(settings.store_url, raw_retention_s=3600, rollup_retention_s=86400)
    loop_s, cpu_s, polls = await _poll_rounds(settings, store, rounds, sleep=True)
    return {
        "targets": targets,
        "target_polls": polls,
        "loop_thread_ms_per_target_poll": round(loop_s * 1000 / polls, 3),
        "process_ms_per_target_poll": round(cpu_s * 1000 / polls, 3),
    }


class _PollClock:
    """The pollers' clock (TargetPoller.clock): its time() recorded, or replayed from the
    recording; the rest is the system's."""

    def __init__(self, readings: list[float], replay: bool) -> None:
        self.readings = readings
        self.replay = replay
        self.used = 0  # readings replayed so far

    def time(self) -> float:
        if self.replay:
            self.used += 1
            return self.readings[self.used - 1]
        self.readings.append(time.time())
        return self.readings[-1]

    def monotonic(self) -> float:
        return SYSTEM.monotonic()

    async def sleep(self, seconds: float) -> None:
        await SYSTEM.sleep(seconds)

    def unused(self) -> int:
        return len(self.readings) - self.used


async def _poll_rounds(
    settings: Settings,
    store: SqlStore,
    rounds: int,
    sleep: bool,
    hook: Callable[[list[TargetPoller]], AbstractContextManager[Any]] = lambda _: nullcontext(),
) -> tuple[float, float, int]:
    """Fresh pollers of the settings' targets: poll_once and write_polls as pollwrite does them,
    within `hook(pollers)`; CPU of the rounds after the first 3. Closes the pollers and the store."""
    pollers = [TargetPoller(t, settings) for t in settings.targets]
    try:
        with hook(pollers):
            return await _rounds(pollers, store, rounds, sleep)
    finally:
        for poller in pollers:
            await poller.close()
        await store.close()


async def _rounds(
    pollers: list[TargetPoller], store: SqlStore, rounds: int, sleep: bool
) -> tuple[float, float, int]:
    polls = 0
    loop_s = cpu_s = 0.0
    for round_no in range(rounds + 3):  # connect, discover, series ids: not per-poll costs
        started = time.monotonic()
        thread0, cpu0 = time.thread_time(), time.process_time()
        batch: list[Poll] = []
        for poller in pollers:
            result = await poller.poll_once()
            if result.info.status != "up":
                raise SystemExit(f"{poller.name} is {result.info.status}: {result.info.reason}")
            batch.append(Poll(result.info, result.state, result.samples, result.info.last_poll_at or 0.0))
            if len(batch) == WRITE_BATCH:
                await store.write_polls(batch)
                batch = []
        if batch:
            await store.write_polls(batch)
        if round_no >= 3:
            loop_s += time.thread_time() - thread0
            cpu_s += time.process_time() - cpu0
            polls += len(pollers)
        if sleep:
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
    return loop_s, cpu_s, polls


async def replay(
    sandbox: MariaDBSandbox, workdir: Path, targets: int, rounds: int, repeats: int, paced: bool = False
) -> dict[str, Any]:
    readings: list[float] = []  # the poll clock as the recorded rounds read it

    async def new_store(name: str) -> SqlStore:
        """A store of its own per replay: a replayed sample has its recorded time."""
        url = f"sqlite+aiosqlite:///{workdir}/{name}.db"
        await asyncio.to_thread(upgrade_to_head, url)
        return SqlStore(url, raw_retention_s=3600, rollup_retention_s=86400)

    def at(port: int) -> Settings:
        return _settings(
            sandbox, workdir, targets, dsn=sandbox.dsn(MONITOR_USER).replace(f":{sandbox.port}/", f":{port}/")
        )

    def clock(replay: bool) -> Callable[[list[TargetPoller]], AbstractContextManager[Any]]:
        @contextmanager
        def hook(pollers: list[TargetPoller]) -> Iterator[None]:
            poll_clock = _PollClock(readings, replay)
            for poller in pollers:
                poller.clock = poll_clock
            yield
            if replay and poll_clock.unused():
                raise SystemExit("the replay read less than the recording: it did not poll as recorded")

        return hook

    # The rounds, live through a recording proxy: every byte each connection read, in order.
    with wirereplay.Recorder(sandbox.host, sandbox.port) as recorder:
        await _poll_rounds(
            at(recorder.port), await new_store("recorded"), rounds, sleep=True, hook=clock(False)
        )
    loops: list[float] = []
    cpus: list[float] = []
    for repeat in range(repeats):
        store = await new_store(f"replay-{repeat}")
        gc.collect()  # what the recording and the repeat before left is not collected in this one
        # Fresh pollers connect to a server process that answers what the recording holds.
        with wirereplay.replay_server(recorder.conversations, workdir) as port:
            loop_s, cpu_s, polls = await _poll_rounds(at(port), store, rounds, sleep=paced, hook=clock(True))
        loops.append(loop_s * 1000 / polls)
        cpus.append(cpu_s * 1000 / polls)
    return {
        "targets": targets,
        "target_polls_per_repeat": polls,
        "repeats": repeats,
        "paced": paced,
        "loop_thread_ms_per_target_poll_min_median": [
            round(min(loops), 3),
            round(statistics.median(loops), 3),
        ],
        "process_ms_per_target_poll_min_median": [round(min(cpus), 3), round(statistics.median(cpus), 3)],
    }


def _poller_setting() -> None:
    """uvloop's loop and a poller's GC threshold (poolscope/fleet/worker.py, services.tune_gc)."""
    import uvloop

    gc.freeze()
    gc.set_threshold(*POLLER_GC_THRESHOLD)
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


async def fleet(sandbox: MariaDBSandbox, workdir: Path, targets: int, seconds: float) -> dict[str, Any]:
    settings = _settings(sandbox, workdir, targets)
    polls = 0
    async with (
        run_services(settings, AuthService(settings)) as services,
        services.store.hub.subscribe() as queue,
    ):
        await asyncio.sleep(min(10.0, 2 + targets / 50))  # connect and warm up
        while not queue.empty():
            queue.get_nowait()
        cpu0, t0 = time.process_time(), time.monotonic()
        deadline = t0 + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=left)
            except TimeoutError:
                break
            if isinstance(event, PollEvent) and event.target_info.status == "up":
                polls += 1
        cpu_s, wall_s = time.process_time() - cpu0, time.monotonic() - t0
    return {
        "targets": targets,
        "seconds": round(wall_s, 1),
        "target_polls": polls,
        "polls_per_s": round(polls / wall_s, 1),
        "cpu_core": round(cpu_s / wall_s, 3),
        "cpu_ms_per_target_poll": round(cpu_s * 1000 / max(polls, 1), 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m poolscope_bench.pollprofile", description=__doc__)
    parser.add_argument("mode", choices=("stages", "poll", "pollwrite", "replay", "fleet"))
    parser.add_argument("--targets", type=int, default=50)
    parser.add_argument(
        "--rounds", type=int, default=20, help="stages, poll, pollwrite, replay: polls per target"
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="fleet: measured window")
    parser.add_argument("--repeats", type=int, default=5, help="replay: replays of the recorded rounds")
    parser.add_argument(
        "--paced", action="store_true", help="replay: rounds 1 s apart as recorded, not back to back"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.repeats < 1:
        parser.error("--rounds and --repeats are 1 at least")
    with tempfile.TemporaryDirectory(prefix="pollprofile-") as tmp:
        workdir = Path(tmp)
        with MariaDBSandbox(workdir / "sandbox", max_connections=args.targets + 50) as sandbox:
            if args.mode == "stages":
                out = asyncio.run(stages(sandbox, workdir, args.targets, args.rounds))
            elif args.mode == "pollwrite":
                _poller_setting()
                out = asyncio.run(poll_write(sandbox, workdir, args.targets, args.rounds))
            elif args.mode == "replay":
                _poller_setting()
                out = asyncio.run(
                    replay(sandbox, workdir, args.targets, args.rounds, args.repeats, args.paced)
                )
            elif args.mode == "poll":
                out = asyncio.run(poll_path(sandbox, workdir, args.targets, args.rounds))
            else:
                out = asyncio.run(fleet(sandbox, workdir, args.targets, args.seconds))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
