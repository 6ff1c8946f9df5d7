"""The demo's operator: `make demo` opens with an act in which two changes are applied through
Poolscope's API, as an operator applies them in the UI (log in, preview, apply; guarded as by
default), and judged by Poolscope's own verdict from the polls it stored. The act sets the stage;
the verdicts are whatever Poolscope measures.

- A steady open-loop load on a pool of one thread group (connections running 1 s CPU-bound
  statements, as in tests/fixtures/verdict/improvement.json, and sysbench `oltp_read_only` at a fixed
  rate: a share of what the single group serves), then `thread_pool_size` 1 -> 2: the queue of the
  single group goes away. The act expects "better".
- A window later the load changes phase (the demo's usual cycle begins: sysbench `oltp_read_write`
  with 64 threads and the built-in waves) and `thread_pool_oversubscribe` is changed as it does.
  The act expects "inconclusive: load changed".

Each change has a whole guard window of the steady load before it, and neither change lies in the
other's windows. What a recording of the act judged: tests/fixtures/verdict/demo-act.json
(tests/devtools/test_demochanges.py). DemoLoad (demoload.py) runs the act.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from poolscope.config import Settings
from poolscope_dev import supervisor, sysbench
from poolscope_dev.loadgen import LoadGenerator
from poolscope_dev.loadtarget import LoadgenError

log = logging.getLogger("poolscope.demochanges")

#: The guard window a Poolscope has unless configured otherwise (config.py guard_window_s).
DEFAULT_WINDOW_S = float(Settings.model_fields["guard_window_s"].default)
#: The act stops its steady load; this bound only matters if the process dies first.
STEADY_BOUND_S = 2 * 3600.0
#: How long the operator waits for the dashboard to answer before giving the changes up.
DASHBOARD_WAIT_S = 300.0


@dataclass(frozen=True)
class Step:
    """One change of the act."""

    variable: str
    value: str
    expect: str
    """The verdict the act sets the stage for; logged beside the verdict Poolscope gives."""


@dataclass(frozen=True)
class Act:
    """The steady load, and the two changes with their timing."""

    pool_size: int = 1
    """thread_pool_size of the sandbox when the act begins."""
    threads: int = 16
    utilization: float = 0.85
    """sysbench runs at a fixed rate (an open loop: whatever the server's latency), this share of
    what it made as fast as it could on the pool of one group (docs/decisions/0500-change-verdict.md)."""
    calibrate_s: int = 15
    """How long it runs as fast as it can first."""
    long: int = 3
    """Connections running long CPU-bound statements: they hold the single group's worker."""
    long_seconds: float = 1.0
    settle_s: float = 20.0
    """Steady load before the window before the first change begins."""
    gap_s: float = 10.0
    """Between the first change's window after and the second change's window before."""
    improve: Step = Step("thread_pool_size", "2", "better")
    shift: Step = Step("thread_pool_oversubscribe", "5", "inconclusive: load changed")

    def improve_at(self, window_s: float) -> float:
        """Seconds after the steady load (and the dashboard) is up."""
        return self.settle_s + window_s

    def shift_at(self, window_s: float) -> float:
        return self.improve_at(window_s) + window_s + self.gap_s

    def seconds(self, window_s: float) -> float:
        """The whole act, the second change's window after included."""
        return self.shift_at(window_s) + window_s


ACT = Act()


class Hands(Protocol):
    """Who applies the act's changes: the demo's operator through the API, or a recording's SET GLOBAL."""

    async def ready(self) -> float | None:
        """Wait until the changes can be applied and judged; the guard window, or None to skip them."""

    async def apply(self, step: Step) -> None: ...

    async def close(self) -> None: ...


class SteadyLoad:
    """The act's load: long CPU-bound statements, and beside them sysbench oltp_read_only at a fixed
    rate, a share of what the pool serves as fast as it can (measured first: on a shared machine
    that moves with everything else running, the dashboard and its browser included)."""

    def __init__(self, dsn: str, act: Act) -> None:
        self.dsn = dsn
        self.act = act
        self.target = sysbench.SysbenchTarget.from_dsn(dsn)
        self.rate = 0
        self._sysbench: subprocess.Popen[bytes] | None = None
        self._long: LoadGenerator | None = None
        self._task: asyncio.Task[Any] | None = None

    async def start(self) -> None:
        act = self.act
        self._long = LoadGenerator(
            self.dsn,
            "stall",
            STEADY_BOUND_S,
            act.long,
            stall_seconds=act.long_seconds,
            stall_pingers=0,
            progress_every_s=3600,
        )
        self._task = asyncio.create_task(self._long.run())
        full = await asyncio.to_thread(
            sysbench.run, self.target, "oltp_read_only", threads=act.threads, time_s=act.calibrate_s
        )
        self.rate = max(1, round(full.tps * act.utilization))
        self._sysbench = sysbench.start(
            self.target,
            "oltp_read_only",
            threads=act.threads,
            time_s=int(STEADY_BOUND_S),
            report_interval=0,
            extra_args=(f"--rate={self.rate}",),
        )
        log.info(
            "steady load: %d connections running %.0f s statements; sysbench oltp_read_only, %d threads,"
            " at %d tx/s (%.0f %% of the %.0f tx/s it made as fast as it could)",
            act.long,
            act.long_seconds,
            act.threads,
            self.rate,
            act.utilization * 100,
            full.tps,
        )

    async def stop(self) -> None:
        if self._long is not None:
            self._long.stop()
        if self._task is not None:
            with contextlib.suppress(LoadgenError):
                await self._task
        proc, self._sysbench = self._sysbench, None
        if proc is not None:
            await asyncio.to_thread(supervisor.Child("sysbench", proc, None).stop, 10)


async def opening_act(dsn: str, act: Act, hands: Hands, sleep: Any) -> bool:
    """The steady load and the first change; returns when the second change is due (the caller
    starts the next phase of the load, then applies it), True when it is to be applied.
    `sleep(seconds)` returns False once the load is being stopped."""
    await asyncio.to_thread(sysbench.prepare, sysbench.SysbenchTarget.from_dsn(dsn))
    window = await hands.ready()
    if window is None:
        return False
    steady = SteadyLoad(dsn, act)
    try:
        await steady.start()
        started = time.monotonic()
        if not await sleep(act.improve_at(window)):
            return False
        await hands.apply(act.improve)
        return bool(await sleep(started + act.shift_at(window) - time.monotonic()))
    finally:
        await steady.stop()


class ApiOperator:
    """The demo's operator: logs in to the dashboard and applies each step as the Apply dialog
    does (preview, then apply, guarded as configured by default), then logs the verdict."""

    def __init__(self, url: str, target: str, password_file: Path, user: str = "operator") -> None:
        self.url = url.rstrip("/")
        self.target = target
        self.password_file = password_file
        self.user = user
        self.window_s = DEFAULT_WINDOW_S
        self._client = httpx.AsyncClient(base_url=self.url, timeout=30.0)
        self._reports: list[asyncio.Task[None]] = []

    async def ready(self) -> float | None:
        deadline = time.monotonic() + DASHBOARD_WAIT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if (await self._client.get("/api/health")).status_code == 200:
                    break
            await asyncio.sleep(1.0)
        else:
            log.warning("the dashboard did not answer within %.0f s: no changes applied", DASHBOARD_WAIT_S)
            return None
        try:
            await self._login()
            preview = await self._preview(ACT.improve)
        except (httpx.HTTPError, DemoChangeError) as e:
            log.warning("the demo's changes are not applied: %s", e)
            return None
        self.window_s = float(preview["guard_window_s"])
        return self.window_s

    async def _login(self) -> None:
        password = self.password_file.read_text().strip()
        r = await self._client.post("/api/auth/login", json={"username": self.user, "password": password})
        if r.status_code != 200:
            raise DemoChangeError(f"login as {self.user} refused ({r.status_code})")
        self._client.headers["Authorization"] = f"Bearer {r.json()['token']}"

    async def _preview(self, step: Step) -> dict[str, Any]:
        r = await self._client.get(
            f"/api/targets/{self.target}/apply/preview",
            params={"variable": step.variable, "value": step.value},
        )
        if r.status_code != 200:
            raise DemoChangeError(f"preview of {step.variable}={step.value}: {r.status_code} {_detail(r)}")
        return dict(r.json())

    async def apply(self, step: Step) -> None:
        try:
            preview = await self._preview(step)
            r = await self._client.post(
                f"/api/targets/{self.target}/apply", json={"variable": step.variable, "value": step.value}
            )
            if r.status_code != 200:
                raise DemoChangeError(f"apply {step.variable}={step.value}: {r.status_code} {_detail(r)}")
        except (httpx.HTTPError, DemoChangeError) as e:
            log.warning("the demo's change %s=%s failed: %s", step.variable, step.value, e)
            return
        entry = r.json()
        log.info(
            "applied change #%d: %s %s -> %s (guarded: %s); the act expects %r",
            entry["id"],
            step.variable,
            preview["current"],
            entry["new_value"],
            entry["guarded"],
            step.expect,
        )
        self._reports.append(asyncio.create_task(self._report(entry["id"], step)))

    async def _report(self, change_id: int, step: Step) -> None:
        """The verdict once the window after is over (a few tries: the dashboard may be busy)."""
        await asyncio.sleep(self.window_s + 3.0)
        for _ in range(10):
            with contextlib.suppress(httpx.HTTPError):
                r = await self._client.get(f"/api/targets/{self.target}/audit/{change_id}/compare")
                if r.status_code == 200 and r.json()["complete"]:
                    log.info(
                        "change #%d (the act expects %r): %s", change_id, step.expect, r.json()["headline"]
                    )
                    return
            await asyncio.sleep(5.0)
        log.warning("change #%d: no complete verdict read", change_id)

    async def close(self) -> None:
        # A verdict not yet reported when the load stops is still on the page.
        for task in self._reports:
            task.cancel()
        await asyncio.gather(*self._reports, return_exceptions=True)
        await self._client.aclose()


class DemoChangeError(RuntimeError):
    pass


def _detail(r: httpx.Response) -> str:
    with contextlib.suppress(ValueError):
        return str(r.json().get("detail", ""))
    return ""
