"""Runs every target's poller on its own schedule; polls of one target never overlap.

A slow or dead target delays only its own next poll; a store error is logged and the next poll
goes on, so one bad second never stops monitoring. In a fleet (poolscope/fleet/) the scheduler
polls only the targets whose lease this process holds: the lease is checked before each poll, and
the lease keeper tells it (on_ownership) when one is won or given up. The target list can change
while it runs (set_targets): a target whose configuration did not change keeps its poller, its
connection and its schedule.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Protocol

from poolscope.config import Settings, TargetConfig
from poolscope.poller.target_poller import TargetPoller
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

# A target that is down is retried with growing pauses, never slower than this.
MAX_RETRY_INTERVAL_S = 10.0
MAINTENANCE_INTERVAL_S = 30.0
# The lease under which one process of a fleet runs store maintenance (not a valid target name).
MAINTENANCE_LEASE = ":store-maintenance"


class Ownership(Protocol):
    """Who may poll what; without one (a single process) every target is ours."""

    def holds(self, target: str) -> bool: ...


class Scheduler:
    def __init__(
        self,
        settings: Settings,
        store: SqlStore,
        pollers: list[TargetPoller] | None = None,
        *,
        ownership: Ownership | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.ownership = ownership
        # Changed in place by set_targets: the snapshot service reads pollers through this dict.
        self.by_name: dict[str, TargetPoller] = {
            p.name: p
            for p in (
                pollers if pollers is not None else [TargetPoller(t, settings) for t in settings.targets]
            )
        }
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._maintenance: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._running = False
        # set_targets and ownership changes run one at a time.
        self._changing = asyncio.Lock()

    @property
    def pollers(self) -> list[TargetPoller]:
        return list(self.by_name.values())

    def target_names(self) -> list[str]:
        """What a fleet member asks leases for: every target, and the store maintenance."""
        return [*self.by_name, MAINTENANCE_LEASE]

    def polling(self) -> set[str]:
        """The targets with a running poll loop."""
        return {name for name, task in self._tasks.items() if not task.done()}

    def _may_poll(self, name: str) -> bool:
        return self.ownership is None or self.ownership.holds(name)

    def start(self) -> None:
        self._running = True
        for name in self.by_name:
            if self._may_poll(name):
                self._start_task(name)
        self._maintenance = asyncio.create_task(self._run_maintenance(), name="store-maintenance")

    async def stop(self) -> None:
        self._stopping.set()
        self._running = False
        tasks = [*self._tasks.values(), *([self._maintenance] if self._maintenance else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        for poller in self.by_name.values():
            await poller.close()

    # --- which targets run -----------------------------------------------------------------

    def _start_task(self, name: str) -> None:
        task = self._tasks.get(name)
        if task is None or task.done():
            self._tasks[name] = asyncio.create_task(self._run_target(self.by_name[name]), name=f"poll:{name}")

    async def _stop_task(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        poller = self.by_name.get(name)
        if poller is not None:
            await poller.close()  # a target we no longer poll holds no connection to its server

    async def on_ownership(self, gained: set[str], lost: set[str]) -> None:
        """Leases changed: stop what we may no longer poll (before its lease is freed), start the rest."""
        async with self._changing:
            if not self._running:
                return
            for name in list(self._tasks):
                if not self._may_poll(name):
                    await self._stop_task(name)
            for name in self.by_name:
                if self._may_poll(name):
                    self._start_task(name)

    async def set_targets(self, targets: list[TargetConfig]) -> None:
        """Replace the target list: unchanged targets poll on without a break; removed ones stop;
        added ones start; a changed one restarts with a fresh poller (and connection)."""
        async with self._changing:
            wanted = {t.name: t for t in targets}
            for name, poller in list(self.by_name.items()):
                if wanted.get(name) != poller.config:
                    await self._stop_task(name)
                    del self.by_name[name]
            kept = dict(self.by_name)
            self.by_name.clear()
            for name, config in wanted.items():
                self.by_name[name] = kept.get(name) or TargetPoller(config, self.settings)
            if self._running:
                for name in self.by_name:
                    if self._may_poll(name):
                        self._start_task(name)

    # --- the loops -------------------------------------------------------------------------

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=max(seconds, 0.0))

    async def _run_target(self, poller: TargetPoller) -> None:
        interval = self.settings.poll_interval_s
        retry = interval
        next_at = time.monotonic()
        while not self._stopping.is_set():
            if not self._may_poll(poller.name):
                # The lease lapsed (the store unreachable, or taken over): stop until it is won back.
                await poller.close()
                return
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
            if not self._may_poll(MAINTENANCE_LEASE):
                continue  # another member of the fleet maintains the store
            try:
                await self.store.maintain()
            except Exception:
                log.exception("store maintenance failed")
