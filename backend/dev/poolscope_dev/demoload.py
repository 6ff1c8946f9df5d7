"""The demo's background load: sysbench OLTP (when installed) plus a cycle of built-in loads.

The built-in cycle is waves -> trx (lock waits) -> stall -> a quiet pause, repeated, so every
chart and the stall / lock-wait views have something to show. Everything stops by itself
after `hours`, and at once on SIGINT / SIGTERM (sysbench's process group included).

With `--url` (the dashboard) and `--operator-password-file`, it opens with the act of
demochanges.py: a steady load in which the demo's operator applies two changes through
Poolscope's API, one that helps and one as the load changes phase to the above.

    python -m poolscope_dev.demoload --info .demo/load.json --hours 4 \
        --url http://127.0.0.1:8000 --operator-password-file .demo/operator-password   (as `make demo` runs it)

`--info` names a JSON file with {"dsns": {"sbtest": DSN}} (a sandbox info() has that shape).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from poolscope_dev import demochanges, supervisor, sysbench
from poolscope_dev.loadgen import LoadGenerator
from poolscope_dev.loadtarget import LoadgenError

log = logging.getLogger("poolscope.demoload")


@dataclass(frozen=True)
class Phase:
    mode: str  # loadgen mode, or "pause"
    seconds: float
    connections: int | None = None


def default_cycle(with_sysbench: bool) -> list[Phase]:
    # Alongside 64 sysbench threads a smaller wave is enough to make the charts move.
    waves = 24 if with_sysbench else 64
    return [
        Phase("waves", 150, waves),
        Phase("trx", 45, 8),
        Phase("pause", 20),
        Phase("stall", 30, 6),
        Phase("pause", 30),
    ]


class DemoLoad:
    def __init__(
        self,
        dsn: str,
        hours: float,
        *,
        use_sysbench: bool = True,
        sysbench_threads: int = 64,
        sysbench_round_s: int = 300,
        cycle: list[Phase] | None = None,
        act: demochanges.Act | None = None,
        hands: demochanges.Hands | None = None,
    ) -> None:
        if not 0 < hours <= 24:
            raise LoadgenError("hours must be in (0, 24]")
        self.dsn = dsn
        self.deadline = time.monotonic() + hours * 3600
        self.use_sysbench = use_sysbench and sysbench.available()
        self.sysbench_threads = sysbench_threads
        self.sysbench_round_s = sysbench_round_s
        self.cycle = cycle or default_cycle(self.use_sysbench)
        self.act = act
        self.hands = hands
        self._stop = asyncio.Event()
        self._gen: LoadGenerator | None = None
        self._sysbench: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        self._stop.set()
        if self._gen is not None:
            self._gen.stop()

    def _left(self) -> float:
        return self.deadline - time.monotonic()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=max(0.0, seconds))

    async def _wait(self, seconds: float) -> bool:
        """Sleep; False when the load is being stopped, or its time is up first."""
        if seconds >= self._left():
            await self._sleep(self._left())
            return False
        await self._sleep(seconds)
        return not self._stop.is_set()

    async def run(self) -> None:
        tasks: list[asyncio.Task[None]] = []
        try:
            shift_due = await self._opening_act()
            tasks.append(asyncio.create_task(self._builtin_cycle()))
            if self.use_sysbench:
                tasks.append(asyncio.create_task(self._sysbench_loop()))
            else:
                log.info("sysbench not installed: built-in load only")
            if shift_due and self.act is not None and self.hands is not None:
                # As the load changes phase: the change whose verdict cannot credit it.
                await self.hands.apply(self.act.shift)
            await self._sleep(self._left())
        finally:
            self.stop()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._stop_sysbench()
            if self.hands is not None:
                await self.hands.close()
        log.info("demo load stopped")

    async def _opening_act(self) -> bool:
        """demochanges.py's act, when there are hands to apply it and sysbench to make its steady
        load; True when its second change is due now."""
        if self.act is None or self.hands is None:
            return False
        if not self.use_sysbench:
            log.info("sysbench not installed: no opening act (the demo's changes need its fixed-rate load)")
            return False
        try:
            return await demochanges.opening_act(self.dsn, self.act, self.hands, self._wait)
        except (sysbench.SysbenchError, LoadgenError, OSError) as e:
            log.warning("the opening act failed, going on with the usual load: %s", e)
            return False

    async def _builtin_cycle(self) -> None:
        while not self._stop.is_set() and self._left() > 1:
            for phase in self.cycle:
                if self._stop.is_set() or self._left() <= 1:
                    return
                seconds = min(phase.seconds, self._left())
                if phase.mode == "pause":
                    log.info("quiet for %.0fs", seconds)
                    await self._sleep(seconds)
                    continue
                self._gen = LoadGenerator(
                    self.dsn, phase.mode, seconds, phase.connections, progress_every_s=30
                )
                try:
                    await self._gen.run()
                except LoadgenError as e:
                    log.warning("built-in %s load failed: %s; retrying in 10s", phase.mode, e)
                    await self._sleep(10)
                finally:
                    self._gen = None

    async def _sysbench_loop(self) -> None:
        target = sysbench.SysbenchTarget.from_dsn(self.dsn)
        try:
            await asyncio.to_thread(sysbench.prepare, target)
        except (sysbench.SysbenchError, OSError) as e:
            log.warning("sysbench prepare failed, continuing with the built-in load only: %s", e)
            return
        quick_failures = 0
        while not self._stop.is_set() and self._left() > 5 and quick_failures < 3:
            round_s = int(min(self.sysbench_round_s, self._left()))
            started = time.monotonic()
            self._sysbench = sysbench.start(
                target, "oltp_read_write", threads=self.sysbench_threads, time_s=round_s, stdout=None
            )
            log.info("sysbench oltp_read_write: %d threads for %ds", self.sysbench_threads, round_s)
            while self._sysbench.poll() is None and not self._stop.is_set():
                await self._sleep(1)
            if self._stop.is_set():
                return
            rc = self._sysbench.returncode
            self._sysbench = None
            if rc != 0 and time.monotonic() - started < 30:
                quick_failures += 1
                log.warning("sysbench exited with %s after %.0fs", rc, time.monotonic() - started)
                await self._sleep(5)
            else:
                quick_failures = 0
        if quick_failures >= 3:
            log.warning("sysbench keeps failing; continuing with the built-in load only")

    def _stop_sysbench(self) -> None:
        proc, self._sysbench = self._sysbench, None
        if proc is not None:
            supervisor.Child("sysbench", proc, None).stop(grace_s=10)


def _dsn_from_info(path: Path) -> str:
    info = json.loads(path.read_text())
    return str(info["dsns"]["sbtest"]).rstrip("/") + "/sbtest"


async def _amain(args: argparse.Namespace) -> int:
    dsn = args.dsn or _dsn_from_info(args.info)
    hands = None
    if args.url and args.operator_password_file:
        hands = demochanges.ApiOperator(args.url, args.target, args.operator_password_file)
    load = DemoLoad(
        dsn,
        args.hours,
        use_sysbench=not args.no_sysbench,
        sysbench_threads=args.sysbench_threads,
        act=demochanges.ACT,
        hands=hands,
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, load.stop)
    await load.run()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolscope_dev.demoload", description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--info", type=Path, help="sandbox info JSON written by the sandbox CLI (--info-file)")
    src.add_argument("--dsn", help="mysql://sbtest:PW@127.0.0.1:PORT/sbtest (loopback only)")
    p.add_argument("--hours", type=float, default=4.0, help="stop by itself after this long (max 24)")
    p.add_argument("--no-sysbench", action="store_true", help="built-in load only")
    p.add_argument("--sysbench-threads", type=int, default=64)
    p.add_argument("--url", help="the dashboard, for the opening act's changes (http://127.0.0.1:PORT)")
    p.add_argument("--operator-password-file", type=Path, help="the operator's password, for the opening act")
    p.add_argument("--target", default="sandbox", help="the target's name in the dashboard")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the act's requests: demochanges logs what they did
    try:
        return asyncio.run(_amain(args))
    except (LoadgenError, sysbench.SysbenchError, OSError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
