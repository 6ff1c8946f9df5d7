"""Runs every target's poller on its own schedule; polls of one target never overlap.

A slow or dead target delays only its own next poll; a store error is logged and the next poll
goes on, so one bad second never stops monitoring.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from poolscope.config import Settings, TargetConfig
from poolscope.poller.target_poller import TargetPoller
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

# A target that is down is retried with growing pauses, never slower than this.
MAX_RETRY_INTERVAL_S = 10.0
MAINTENANCE_INTERVAL_S = 30.0


class Scheduler:
    def __init__(
        self, settings: Settings, store: SqlStore, pollers: list[TargetPoller] | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        self.pollers = (
            pollers if pollers is not None else [TargetPoller(t, settings) for t in settings.targets]
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()

    def start(self) -> None:
        for poller in self.pollers:
            self._tasks.append(asyncio.create_task(self._run_target(poller), name=f"poll:{poller.name}"))
        self._tasks.append(asyncio.create_task(self._run_maintenance(), name="store-maintenance"))

    async def stop(self) -> None:
        self._stopping.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        for poller in self.pollers:
            await poller.close()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=max(seconds, 0.0))

    async def _run_target(self, poller: TargetPoller) -> None:
        interval = self.settings.poll_interval_s
        retry = interval
        next_at = time.monotonic()
        while not self._stopping.is_set():
            result = await poller.poll_once()
            if result.info.status == "down":
                retry = min(retry * 2, MAX_RETRY_INTERVAL_S)
                next_at = time.monotonic() + retry
                result.info.retry_in_s = retry  # so the UI says when, not "every 1 s"
            else:
                retry = interval
                next_at += interval
                if next_at < time.monotonic():
                    # The poll overran: skip the missed ticks instead of bursting to catch up.
                    next_at = time.monotonic() + interval
                result.info.retry_in_s = None
            try:
                await self.store.write_poll(
                    result.info, result.state, result.samples, ts=result.info.last_poll_at or time.time()
                )
            except Exception:
                log.exception("target %s: storing the poll failed", poller.name)
            await self._sleep(next_at - time.monotonic())

    async def _run_maintenance(self) -> None:
        while not self._stopping.is_set():
            await self._sleep(MAINTENANCE_INTERVAL_S)
            try:
                await self.store.maintain()
            except Exception:
                log.exception("store maintenance failed")

    # --- targets re-read from targets_file / targets_dir (poolscope/targets_source.py) ---
    async def set_targets(self, targets: list[TargetConfig]) -> None:
        """Poll exactly `targets` from now on: unchanged ones keep their poller and task (no
        break in polling), added ones start, removed ones stop, changed ones restart."""
        wanted = {t.name: t for t in targets}
        current = {p.name: p for p in self.pollers}
        tasks = {t.get_name(): t for t in self._tasks}
        for name, poller in current.items():
            if wanted.get(name) == poller.config:
                continue
            task = tasks.get(f"poll:{name}")
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                self._tasks.remove(task)
            self.pollers.remove(poller)
            await poller.close()
        running = {p.name for p in self.pollers}
        for name, config in wanted.items():
            if name in running:
                continue
            poller = TargetPoller(config, self.settings)
            self.pollers.append(poller)
            if self._tasks and not self._stopping.is_set():  # started, not stopping
                self._tasks.append(asyncio.create_task(self._run_target(poller), name=f"poll:{name}"))
